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
    # the example of a language written without spaces prints what it says
    zh = namespace["zh"].predict(["帮我在北京订一家便宜的意大利菜餐厅，两位", "价位多少都行"])
    assert zh.tolist() == ["api_call 意大利菜 北京 两位 便宜", "请问您的价位是多少？"]
