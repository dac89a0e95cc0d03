"""Write a BM25 parameter grid of CACM runs (k1 x b), ready for `workbench sweep`.

    python3 scripts/cacm_sweep.py ../shared/data/cacm /tmp/cacm-grid
    workbench sweep /tmp/cacm-grid/qrels.txt /tmp/cacm-grid/run-*.txt \
        --pattern 'bm25_k1={k1}_b={b}' -m map --folds 5 --plot docs/figures/cacm-bm25-sweep.svg

Uses the project's CACM reader and rankers (workbench.cacm, workbench.baselines).
"""

from __future__ import annotations

import sys
from pathlib import Path

from workbench import baselines, cacm

K1 = (0.3, 0.6, 0.9, 1.2, 1.5, 2.0)
B = (0.2, 0.4, 0.6, 0.75, 0.9, 1.0)


def grid_rankers() -> tuple[baselines.Ranker, ...]:
    return tuple(
        baselines.Ranker(f"bm25_k1={k1:g}_b={b:g}", "bm25", k1=k1, b=b) for k1 in K1 for b in B
    )


def main(source: str, folder: str) -> None:
    files = cacm.write_campaign_files(cacm.load(Path(source)), Path(folder), rankers=grid_rankers())
    print(f"wrote {len(files.runs)} runs, {files.qrels} and {files.topics} to {folder}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: cacm_sweep.py CACM_FOLDER OUTPUT_FOLDER")
    main(sys.argv[1], sys.argv[2])
