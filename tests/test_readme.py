"""The README's Python examples run, on the bundled data."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_examples_run(monkeypatch, capsys):
    monkeypatch.delenv("IRDIALOG_DATA", raising=False)
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks
    namespace: dict = {}
    exec(compile("\n".join(blocks), str(README), "exec"), namespace)
    assert 0.0 <= namespace["search"].best_score_ <= 1.0
