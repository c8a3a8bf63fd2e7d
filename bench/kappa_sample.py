"""What a measured κ of 0.6 says on a calibration sample of 20 pairs, and of 100.

Simulates the judge against the human labels as bench/gate_power.py does: each pair keeps
its human label with probability κ, else takes a random label at the pairs' rate of
relevant ones (which keeps the marginals and makes the expected κ exactly κ). The human
labels are half relevant, as the calibration sample draws both classes. Each sample's κ is
the product's own (``score.stats.Agreement.kappa``). Prints, for each sample size, the
middle 95% of the κ measured when the true κ is 0.6, the large-sample standard error
formula's interval beside it, and how often a judge of true κ 0.4, 0.6 or 0.8 measures
at or above the 0.6 floor (so is let gate).

    .venv/bin/python bench/kappa_sample.py [--draws 20000] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

import numpy as np

from retrieval_eval.score.stats import Agreement

FLOOR = 0.6
SIZES = (20, 50, 100, 200)
TRUE_KAPPAS = (0.4, 0.6, 0.8)
RATE = 0.5  # the share of pairs the humans call relevant


def measured(n: int, kappa: float, draws: int, rng: np.random.Generator) -> np.ndarray:
    """The κ of ``draws`` samples of ``n`` pairs (NaN where it is undefined)."""
    human = np.zeros((draws, n), dtype=bool)
    human[:, : round(n * RATE)] = True
    keep = rng.random((draws, n)) < kappa
    judge = np.where(keep, human, rng.random((draws, n)) < RATE)
    values = np.empty(draws)
    for row in range(draws):
        h, j = human[row], judge[row]
        agreement = Agreement(
            true_positive=int(np.sum(h & j)),
            false_negative=int(np.sum(h & ~j)),
            false_positive=int(np.sum(~h & j)),
            true_negative=int(np.sum(~h & ~j)),
        )
        k = agreement.kappa()
        values[row] = math.nan if k is None else k
    return values


def standard_error(n: int, kappa: float) -> float:
    """The large-sample standard error of κ, sqrt(p_o (1 - p_o) / (n (1 - p_e)^2)), with
    both raters at RATE (p_e = RATE² + (1 - RATE)²)."""
    chance = RATE**2 + (1 - RATE) ** 2
    observed = kappa * (1 - chance) + chance
    return math.sqrt(observed * (1 - observed) / (n * (1 - chance) ** 2))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    header = "| pairs | κ measured when it is 0.6 (middle 95%) | ±1.96 SE | " + " | ".join(
        f"true κ {k}: measures ≥ {FLOOR}" for k in TRUE_KAPPAS
    )
    print(header + " |")
    print("|---" * (3 + len(TRUE_KAPPAS)) + "|")
    for n in SIZES:
        at = {k: measured(n, k, args.draws, rng) for k in TRUE_KAPPAS}
        low, high = np.nanpercentile(at[0.6], [2.5, 97.5])
        se = standard_error(n, 0.6)
        passes = " | ".join(f"{np.nanmean(at[k] >= FLOOR - 1e-12):.0%}" for k in TRUE_KAPPAS)
        print(
            f"| {n} | {low:.2f} to {high:.2f} | {0.6 - 1.96 * se:.2f} to "
            f"{0.6 + 1.96 * se:.2f} | {passes} |"
        )


if __name__ == "__main__":
    main()
