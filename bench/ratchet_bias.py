"""How far the ratchet lifts the baseline of a retriever that is not deterministic, and how
often an unchanged pull request then fails.

A retriever whose per-query values vary from run to run (an approximate index, an LLM
reranker) is searched ``repeats`` times a query and scored by the mean, as the run does.
Main is pushed ``--pushes`` times with no change at all; after each push the ratchet keeps
the better of the baseline and the run (the product's rule, ``compare/ratchet.better``,
per-query values following their mean). Then an unchanged pull request is judged against
the ratcheted baseline by the product's rule (``compare/rules.judge_metric``), and the
same against a fixed baseline (the first push's run):

    .venv/bin/python bench/ratchet_bias.py --queries 25 --repeats 3 --pushes 10

The per-query values are drawn once (a Beta(2, 2) spread of NDCG@10 over queries); a
share ``--varying`` of the queries move between runs by a normal noise of ``--noise``,
clipped to [0, 1]. This is a simulation of the noise, not a run of a real retriever; the
rule and the ratchet are the product's own.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from retrieval_eval.compare.ratchet import better
from retrieval_eval.compare.rules import judge_metric
from retrieval_eval.results import RULES, GatePolicy

METRIC = "ndcg@10"


def one_run(truth: np.ndarray, varying: np.ndarray, noise: float, repeats: int, rng) -> np.ndarray:
    runs = np.repeat(truth[None, :], repeats, axis=0)
    jitter = rng.normal(0.0, noise, size=runs.shape) * varying[None, :]
    return np.asarray(np.clip(runs + jitter, 0.0, 1.0).mean(axis=0))


def simulate(args: argparse.Namespace, rule: str) -> tuple[float, float, float]:
    """(mean bias of the ratcheted baseline, false-fail rate ratcheted, false-fail fixed)."""
    policy = GatePolicy(rule=rule, tolerance=args.tolerance, headline=METRIC, gated=(METRIC,))
    rng = np.random.default_rng(args.seed)
    biases, ratcheted_fails, fixed_fails = [], 0, 0
    for _ in range(args.trials):
        truth = rng.beta(2.0, 2.0, size=args.queries)
        varying = rng.random(args.queries) < args.varying
        baseline = one_run(truth, varying, args.noise, args.repeats, rng)
        fixed = baseline
        for _push in range(args.pushes - 1):
            measured = one_run(truth, varying, args.noise, args.repeats, rng)
            if better(METRIC, float(measured.mean()), float(baseline.mean())):
                baseline = measured
        biases.append(baseline.mean() / truth_mean(truth, varying, args, rng) - 1.0)
        pull = one_run(truth, varying, args.noise, args.repeats, rng)
        ratcheted_fails += judge_metric(baseline, pull, metric=METRIC, policy=policy).outcome == (
            "fail"
        )
        fixed_fails += judge_metric(fixed, pull, metric=METRIC, policy=policy).outcome == "fail"
    return float(np.mean(biases)), ratcheted_fails / args.trials, fixed_fails / args.trials


def truth_mean(truth: np.ndarray, varying: np.ndarray, args: argparse.Namespace, rng) -> float:
    """The retriever's expected mean (over its noise), estimated from many runs."""
    return float(
        np.mean([one_run(truth, varying, args.noise, args.repeats, rng).mean() for _ in range(50)])
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pushes", type=int, default=10)
    parser.add_argument("--noise", type=float, default=0.15)
    parser.add_argument("--varying", type=float, default=0.3)
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default=",".join(RULES))
    args = parser.parse_args(argv)
    print(
        f"{args.queries} queries, repeats {args.repeats}, {args.pushes} pushes, "
        f"{args.varying:.0%} of queries vary by σ {args.noise:g}, {args.trials} trials"
    )
    print("| rule | ratcheted baseline's bias | unchanged PR fails: ratcheted | fixed |")
    print("|---|--:|--:|--:|")
    for rule in args.rules.split(","):
        bias, ratcheted, fixed = simulate(args, rule)
        print(f"| {rule} | {bias:+.1%} | {ratcheted:.0%} | {fixed:.0%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
