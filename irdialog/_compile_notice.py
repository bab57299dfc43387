"""One line on stderr when numba is about to compile an irdialog kernel (``irdialog`` command).

The kernels are compiled with ``cache=True``: the first run compiles them (up to a minute
or so, in silence otherwise), later runs load them from numba's on-disk cache. Numba
announces a real compilation, and only that (not a load from the cache), through its
``numba:compile`` event; the listener here prints the notice at the first such event for a
kernel defined in irdialog, once per process.
"""

from __future__ import annotations

import sys

from numba.core import event

MESSAGE = (
    "irdialog: compiling numba kernels (first run only, about a minute; later runs load them "
    "from numba's cache)"
)


class CompileNotice(event.Listener):
    """A numba event listener that writes :data:`MESSAGE` to ``stream`` once, when the first
    irdialog kernel starts compiling."""

    def __init__(self, stream=None):
        self.stream = stream
        self.announced = False

    def on_start(self, ev):
        if self.announced:
            return
        dispatcher = (ev.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if module.split(".")[0] == "irdialog":
            self.announced = True
            stream = self.stream or sys.stderr
            print(MESSAGE, file=stream, flush=True)

    def on_end(self, ev):
        pass


_INSTALLED: CompileNotice | None = None


def announce_compilation(stream=None) -> CompileNotice:
    """Install the notice for this process (once; later calls return the same listener,
    pointed at ``stream``)."""
    global _INSTALLED
    if _INSTALLED is None:
        _INSTALLED = CompileNotice(stream)
        event.register("numba:compile", _INSTALLED)
    else:
        _INSTALLED.stream = stream
    return _INSTALLED
