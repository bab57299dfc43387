"""Dev evidence for the TF-IDF + match type shortfall on dialog bAbI task 4 (BENCHMARKS.md)."""

from sklearn.pipeline import make_pipeline

from irdialog import MatchTypeFeaturizer, TfidfRanker
from irdialog.datasets import load_dialog_babi

H = "../shared/data"
tr = load_dialog_babi(4, "trn", data_home=H)
dv = load_dialog_babi(4, "dev", data_home=H)
paper_types = sorted(set(tr.kb.values()) - {"R_name"})
for types in (paper_types, None):  # None: restaurant names typed too
    for fh in (True, False):
        for h in (False, True):
            for tw in (1.0, 3.0):
                m = make_pipeline(
                    MatchTypeFeaturizer(tr.kb, types=types, use_history=fh),
                    TfidfRanker(candidates=tr.candidates, use_history=h, type_weight=tw),
                ).fit(tr.X, tr.y)
                variant = f"types={'paper' if types else 'all'} featurizer use_history={fh}"
                acc = 100 * m.score(dv.X, dv.y)
                print(f"{variant} ranker use_history={h} type_weight={tw}: dev {acc:.1f}")
