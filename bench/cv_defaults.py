"""Should a retriever's default change? The rule applied to `tune --json` of two or more
collections, each searched over the same grid.

    retrieval-eval tune DIR_A --retriever bm25 --param ... --json a.json
    retrieval-eval tune DIR_B --retriever bm25 --param ... --json b.json
    .venv/bin/python bench/cv_defaults.py a.json b.json

The rule, fixed before any result was read:

1. On each collection, ``tune``'s cross-validated score (5 folds, seed 0: each fold scored
   with the point the other folds chose) must beat the current default's score there.
2. The candidate default is the one grid point with the best mean over the collections
   (each collection weighs the same, whatever its number of queries).
3. The candidate must beat the current default on every collection, and so must the point
   chosen on each other collection alone (a transfer the choosing never saw): the gain has
   to hold where it was not chosen.
4. Then the default changes to the candidate; otherwise it stays, and the table says why.

Per collection the table gives the current default, the cross-validated score, the
candidate's and the transferred point's scores with their paired sign-flip p against the
current default (the test the gate uses).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from retrieval_eval.score.stats import paired_comparison


def _label(settings: dict[str, Any]) -> str:
    return " ".join(f"{name}={value}" for name, value in settings.items())


def main(paths: list[str]) -> int:
    runs = [json.loads(Path(path).read_text()) for path in paths]
    grids = [[json.dumps(p["settings"], sort_keys=True) for p in run["points"]] for run in runs]
    if any(grid != grids[0] for grid in grids):
        print("the files were not searched over the same grid", file=sys.stderr)
        return 2
    names = [Path(run["dataset"]).parent.name or run["dataset"] for run in runs]
    per_point = np.array([[p["score"] for p in run["points"]] for run in runs])
    candidate = int(np.argmax(per_point.mean(axis=0)))
    own_best = [int(np.argmax(row)) for row in per_point]
    chosen_settings = runs[0]["points"][candidate]["settings"]
    print(f"candidate (best mean over {len(runs)}): {_label(chosen_settings)}")
    print(f"current default: {_label(runs[0]['current']['settings'])}\n")
    print("| collection | queries | current | cross-validated | candidate | p | transferred | p |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    holds = True
    for index, run in enumerate(runs):
        queries = run["per_query"]["queries"]
        current = dict(zip(queries, run["per_query"]["current"], strict=True))

        def scores(point: int, run: dict[str, Any] = run, queries: list[str] = queries) -> dict:
            return dict(zip(queries, run["per_query"]["points"][point], strict=True))

        chosen = paired_comparison(scores(candidate), current)
        others = [own_best[j] for j in range(len(runs)) if j != index]
        transferred = [paired_comparison(scores(point), current) for point in others]
        base = run["current"]["score"]
        cross = run["cross_validated"]["mean"]
        transfer_means = [base + t.mean_diff for t in transferred]
        holds &= cross > base and chosen.mean_diff > 0 and all(t.mean_diff > 0 for t in transferred)
        shown = ", ".join(f"{m:.4f}" for m in transfer_means)
        ps = ", ".join(f"{t.p_value:.3f}" for t in transferred)
        print(
            f"| {names[index]} | {len(queries)} | {base:.4f} | {cross:.4f} | "
            f"{base + chosen.mean_diff:.4f} | {chosen.p_value:.3f} | {shown} | {ps} |"
        )
    print()
    print("the rule holds: change the default" if holds else "the rule fails: keep the default")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
