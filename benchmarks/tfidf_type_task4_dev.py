"""Dev evidence for the TF-IDF + match type shortfall on dialog bAbI task 4 (BENCHMARKS.md).

Every variant of the match-type featurizer and the ranker, scored on dev (test never read)::

    python -m benchmarks.tfidf_type_task4_dev --data-home DIR
"""

import argparse
import itertools

from sklearn.pipeline import make_pipeline

from irdialog import MatchTypeFeaturizer, TfidfRanker
from irdialog.datasets import load_dialog_babi


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=None, help="default: $IRDIALOG_DATA, then bundled")
    args = ap.parse_args(argv)
    tr = load_dialog_babi(4, "trn", data_home=args.data_home)
    dv = load_dialog_babi(4, "dev", data_home=args.data_home)
    paper_types = sorted(set(tr.kb.values()) - {"R_name"})
    # types None: restaurant names typed too
    grid = itertools.product((paper_types, None), (True, False), (False, True), (1.0, 3.0))
    for types, featurizer_history, history, weight in grid:
        model = make_pipeline(
            MatchTypeFeaturizer(tr.kb, types=types, use_history=featurizer_history),
            TfidfRanker(candidates=tr.candidates, use_history=history, type_weight=weight),
        ).fit(tr.X, tr.y)
        variant = f"types={'paper' if types else 'all'} featurizer use_history={featurizer_history}"
        print(
            f"{variant} ranker use_history={history} type_weight={weight}: "
            f"dev {100 * model.score(dv.X, dv.y):.1f}"
        )


if __name__ == "__main__":
    main()
