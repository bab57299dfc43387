"""Render `irdialog bench dialog-babi` JSON results as a Markdown table next to the paper.

    python benchmarks/markdown_table.py results/tfidf.json results/nn.json ...

Per-response accuracy in %, per-dialog accuracy in brackets, ours then the paper's.
"""

import json
import sys

from irdialog.bench import with_paper


def main(paths):
    results = [json.loads(open(p, encoding="utf-8").read()) for p in paths]
    header = (
        "| task | split | n | " + " | ".join(f"{r['model']} (ours) | paper" for r in results) + " |"
    )
    print(header)
    print("|" + "---|" * (3 + 2 * len(results)))
    tables = [with_paper(r) for r in results]
    for rows in zip(*tables):
        first = rows[0]
        cells = [str(first["task"]), first["split"], str(first["n"])]
        for r in rows:
            flag = " **short**" if r["per_response"] < r["paper_per_response"] - 1.0 else ""
            cells.append(f"{r['per_response']:.1f} ({r['per_dialog']:.1f}){flag}")
            cells.append(f"{r['paper_per_response']:.1f} ({r['paper_per_dialog']:.1f})")
        print("| " + " | ".join(cells) + " |")
    print()
    for r in results:
        print(f"- {r['model']}: {r['seconds']:.1f} s; chosen on dev: " + json.dumps(r["params"]))


if __name__ == "__main__":
    main(sys.argv[1:])
