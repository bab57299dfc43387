"""The layering of CONTRIBUTING.md: every module of irdialog imports only from lower layers
(or its own package), so there is no import cycle, and the model packages never import one
another."""

import ast
from pathlib import Path

import irdialog

PACKAGE = Path(irdialog.__file__).parent

# Bottom to top; a module's unit is the longest of its names listed here (``bench._command``)
# or else its top-level module or subpackage under irdialog (``bench``). Units of one layer
# never import one another.
LAYERS = [
    {"text", "_compat", "_digest", "_topk", "_threads", "_epochs", "_held"},
    {"base"},
    {"features", "_babi_qa_heuristics", "metrics", "pipeline", "datasets"},
    {"retrieval", "embed", "svm"},
    {"entities", "ensemble"},
    {"persist", "chat", "_arguments", "_compile_ahead", "_compile_notice"},
    {"bench"},  # the suites, their registry, harness, presets and report
    {"plot"},  # draws bench results with their suite's labels
    {"bench._command"},  # irdialog bench: parses a suite's run, --plot
    {"bench._reproduce"},  # re-parses recorded bench commands
    {"cli"},
    {"__init__", "__main__"},
]
UNITS = set().union(*LAYERS)


def _layer(unit: str) -> int:
    return next(i for i, units in enumerate(LAYERS) if unit in units)


def _unit(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    names = [".".join(parts[1:i]) for i in range(len(parts), 1, -1)]
    return next((name for name in names if name in UNITS), parts[1])


def _imports(path: Path):
    """The irdialog modules one file imports, as absolute names (``__version__``, a string
    defined by the package, is not an import of its modules)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = parts[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "irdialog")
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        base = package[: len(package) - node.level + 1] if node.level else []
        name = ".".join(base + ([node.module] if node.module else []))
        if name.split(".")[0] != "irdialog":
            continue
        if node.module is not None and name != "irdialog":
            yield name
            continue
        for alias in node.names:  # from . import x: x may be a module
            if alias.name == "__version__":
                continue
            sub = f"{name}.{alias.name}"
            is_module = (PACKAGE.parent / sub.replace(".", "/")).is_dir() or (
                PACKAGE.parent / (sub.replace(".", "/") + ".py")
            ).is_file()
            yield sub if is_module else name


def test_modules_import_only_from_lower_layers():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        unit = _unit(".".join(rel.parts))
        for target in _imports(path):
            other = _unit(target)
            if other == unit:
                continue
            mine, theirs = _layer(unit), _layer(other)
            if theirs >= mine:
                wrong.append(f"{'/'.join(rel.parts)}.py imports {target}")
    assert not wrong, "imports against the layering of CONTRIBUTING.md:\n" + "\n".join(wrong)


def test_every_module_has_a_layer():
    units = {_unit(".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts))
             for p in PACKAGE.rglob("*.py")}  # fmt: skip
    assert units <= set().union(*LAYERS), units - set().union(*LAYERS)
