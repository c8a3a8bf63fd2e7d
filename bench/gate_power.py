"""How often does a gate rule give the wrong verdict on a golden set of real size?

Runs many retriever variants a pull request might produce on one BEIR collection through
the product (`retrieval-eval beir --run`, then `retrieval-eval trec -q` for each query's
NDCG@10, MRR@10, P@5 and Recall@10), takes every ordered pair of variants as one change
(base → PR) whose true effect is the relative change of NDCG@10 over all the collection's
judged queries, draws golden sets of N queries with replacement, and applies each rule to
the paired per-query values of every draw:

    .venv/bin/python bench/gate_power.py CRANFIELD_BEIR_DIR --work WORK
    .venv/bin/python bench/gate_power.py VASWANI_BEIR_DIR --work WORK --judge

The variant runs and their per-query values are cached under ``WORK/<collection>/``, so a
second invocation only re-draws (a few minutes on two cores). ``--json`` writes every
rate for ``--choose``, which picks a rule on one collection's file and shows it on the
other's (cross-validation: the rule is never chosen on the numbers shown as the check):

    .venv/bin/python bench/gate_power.py --choose cranfield.json vaswani.json

The paired test is the product's two-sided sign-flip (paired randomization) test, run for
all draws at once: every draw's differences against one fixed matrix of random sign
patterns per N (``--resamples``), with the product's +1 correction and tie tolerance.
``--check-product`` re-runs the product's own ``sign_flip_p_value`` on a sample of draws
and prints how often the two decisions at 0.05 agree.

``--judge`` adds the simulated judge: labels derived from the qrels with Cohen's κ known
in advance (each pooled pair keeps its human label with probability κ, else takes a
random label with the pool's rate of relevant pairs, which leaves the marginals alone and
makes the expected κ exactly κ), scored by `retrieval-eval trec` like the human qrels, and
the gate's rates with a human set alone and with a judged tier of 100, 200 and 400
queries beside it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

CLI = Path(sys.executable).parent / "retrieval-eval"

METRICS = ("ndcg_cut_10", "recip_rank", "P_5", "recall_10")  # NDCG@10, MRR@10, P@5, Recall@10
NDCG, MRR = 0, 1
TIE_EPSILON = 1e-9  # the product's: differences below it are float noise
SIZES = (20, 25, 50, 100)
TOLERANCE = 0.05

FP_BANDS = ((0.05, 0.10), (0.10, 0.20), (0.20, math.inf))  # true drop, as a fraction
COLUMNS = ("FP5-10", "FP10-20", "FP>20", "FF0-5", "FF>5", "FFall", "near0", "flag0-5", "D80")

# Each variant: the retriever and its [retrievers] tables, as a user writes them.
_INT8 = '[retrievers.dense]\nmodel = "all-MiniLM-L6-v2-int8"\n'
_FP32 = '[retrievers.dense]\nmodel = "all-MiniLM-L6-v2"\n'
VARIANTS: dict[str, tuple[str, str]] = {
    "bm25": ("bm25", ""),
    "bm25_k1.2_b0.75": ("bm25", "[retrievers.bm25]\nk1 = 1.2\nb = 0.75\n"),
    "bm25_k0.9_b0.4": ("bm25", "[retrievers.bm25]\nk1 = 0.9\nb = 0.4\n"),
    "bm25_k2.1_b0.9": ("bm25", "[retrievers.bm25]\nk1 = 2.1\nb = 0.9\n"),
    "bm25_nostem": ("bm25", "[retrievers.bm25]\nstemming = false\n"),
    "bm25_stop_lucene": ("bm25", '[retrievers.bm25]\nstopwords = "lucene"\n'),
    "bm25_b0.3": ("bm25", "[retrievers.bm25]\nb = 0.3\n"),
    "bm25_stop_none": ("bm25", "[retrievers.bm25]\nstopwords = false\n"),
    "bm25_previous": (
        "bm25",
        "[retrievers.bm25]\nk1 = 0.9\nb = 0.4\nstemming = false\nstopwords = true\n",
    ),
    "like": ("like", ""),
    "dense": ("dense", _FP32),
    "dense_int8": ("dense", _INT8),
    "hybrid": ("hybrid", ""),
    "hybrid_a0.5": ("hybrid", "[retrievers.hybrid]\nalpha = 0.5\n"),
    "hybrid_a0.9": ("hybrid", "[retrievers.hybrid]\nalpha = 0.9\n"),
    "hybrid_rrf": ("hybrid", '[retrievers.hybrid]\nfusion = "rrf"\n'),
    "hybrid_previous": (
        "hybrid",
        '[retrievers.hybrid]\nnormalisation = "theoretical-min"\nalpha = 0.95\n',
    ),
}


# ---------------------------------------------------------------- producing the values


def collection_name(directory: Path) -> str:
    directory = directory.resolve()
    return directory.parent.name if directory.name == "beir" else directory.name


def _cli(*args: str) -> str:
    done = subprocess.run([str(CLI), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"retrieval-eval {' '.join(args)}\n{done.stderr}")
    return done.stdout


def run_variant(directory: Path, name: str, folder: Path) -> Path:
    """The variant's TREC run (top 100), made once through `retrieval-eval beir`."""
    run = folder / "runs" / f"{name}.run"
    if run.exists():
        return run
    run.parent.mkdir(parents=True, exist_ok=True)
    retriever, table = VARIANTS[name]
    config = folder / "configs" / f"{name}.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(table)
    partial = run.with_suffix(".partial")
    print(f"running {name} on {directory}", file=sys.stderr, flush=True)
    _cli(
        "beir",
        str(directory),
        "--retriever",
        retriever,
        "--config",
        str(config),
        "--run",
        str(partial),
        "--cache-dir",
        str(folder / "cache"),
        "--no-progress",
    )
    partial.replace(run)
    return run


def trec_per_query(qrels: Path, run: Path) -> dict[str, dict[str, float]]:
    """Each judged query's four values, by `retrieval-eval trec -q -c` (MRR@10 is
    recip_rank over the top 10, ``-M 10``)."""
    measures = ["-m", "ndcg_cut.10", "-m", "P.5", "-m", "recall.10"]
    main = json.loads(_cli("trec", "-q", "-c", "--json", *measures, str(qrels), str(run)))
    rr = json.loads(
        _cli("trec", "-q", "-c", "--json", "-M", "10", "-m", "recip_rank", str(qrels), str(run))
    )
    out: dict[str, dict[str, float]] = {}
    for query, values in main["per_query"].items():
        out[query] = {**values, "recip_rank": rr["per_query"][query]["recip_rank"]}
    return out


def per_query_values(
    qrels: Path, runs: Mapping[str, Path], cache: Path, queries: Sequence[str] | None = None
) -> tuple[list[str], np.ndarray]:
    """``(queries, values[variant, metric, query])`` for every variant, cached in ``cache``.
    With ``queries``, in that order, 0 for a query the qrels have nothing relevant for
    (trec_eval leaves such a query out)."""
    stored: dict[str, Any] = json.loads(cache.read_text()) if cache.exists() else {}
    for name, run in runs.items():
        if name not in stored:
            stored[name] = trec_per_query(qrels, run)
            cache.write_text(json.dumps(stored))
    if queries is None:
        queries = sorted(stored[next(iter(runs))], key=_natural)
    empty = dict.fromkeys(METRICS, 0.0)
    values = np.array(
        [[[stored[name].get(q, empty)[m] for q in queries] for m in METRICS] for name in runs],
        dtype=np.float64,
    )
    return queries, values


def _natural(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (sys.maxsize, text)


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for number, line in enumerate(path.read_text().splitlines()):
        parts = line.split("\t") if "\t" in line else line.split()
        if number == 0 and not parts[-1].lstrip("-").isdigit():
            continue  # BEIR's header
        if len(parts) == 4:
            parts = [parts[0], parts[2], parts[3]]
        query, doc, grade = parts
        out.setdefault(query, {})[doc] = int(grade)
    return out


def top_k(run: Path, k: int = 10) -> dict[str, list[str]]:
    """The run's top ``k`` per query, ranked as trec_eval ranks (score descending, ties by
    document id descending)."""
    rows: dict[str, list[tuple[float, str]]] = {}
    for line in run.read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        rows.setdefault(query, []).append((float(score), doc))
    return {q: [d for _, d in sorted(r, reverse=True)[:k]] for q, r in rows.items()}


# ---------------------------------------------------------------- the draws


@dataclass
class Stats:
    """Per-draw statistics of one change on golden sets of ``n`` queries (arrays of draws).

    ``drop[m]``: relative drop of metric ``m`` (positive = worse), the product's
    ``relative_drop``. ``p2[m]``: two-sided sign-flip p. ``p1``: one-sided p of NDCG@10
    for "worse". ``p_ni[margin]``: one-sided p of NDCG@10 for "drop smaller than margin"
    (non-inferiority). ``lost``: queries whose first relevant document left the top 10.
    """

    n: int
    drop: np.ndarray  # (metrics, draws)
    p2: np.ndarray  # (metrics, draws)
    p1: np.ndarray  # (draws,)
    p_ni: dict[float, np.ndarray]
    lost: np.ndarray  # (draws,)


def relative_drops(base_sum: np.ndarray, pr_sum: np.ndarray, n: int) -> np.ndarray:
    """The product's relative_drop on the means ``base_sum / n`` and ``pr_sum / n``."""
    base, current = base_sum / n, pr_sum / n
    with np.errstate(divide="ignore", invalid="ignore"):
        drop = (base - current) / base
    drop = np.where(base == 0, np.where(base - current > 0, np.inf, -np.inf), drop)
    return np.where(np.abs(current - base) < TIE_EPSILON, 0.0, drop)


def sign_patterns(n: int, resamples: int, seed: int) -> np.ndarray:
    """``resamples`` random sign patterns over ``n`` pairs, (n, resamples), float32."""
    rng = np.random.default_rng([seed, n])
    return rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=(n, resamples))


def flip_p(diffs: np.ndarray, signs: np.ndarray, side: str) -> np.ndarray:
    """Sign-flip p of each row of ``diffs`` (draws × n) against ``signs`` (n × R): the
    product's statistic (the mean), tolerance and +1 correction. ``side``: "two" (|mean|
    as large), "less" (mean as low: evidence of "worse"), "greater" (as high)."""
    n = diffs.shape[1]
    if diffs.shape[0] == 0:
        return np.ones(0)
    observed = diffs.mean(axis=1)
    flipped = (diffs.astype(np.float32) @ signs) / np.float32(n)
    tol = 1e-12 * np.maximum(1.0, np.abs(diffs).max(axis=1))
    # float32 products: widen the tolerance to their rounding, so exact ties still count
    tol = tol + 1e-6 * np.maximum(1e-3, np.abs(diffs).max(axis=1))
    if side == "two":
        extreme = np.abs(flipped) >= (np.abs(observed) - tol)[:, None]
    elif side == "less":
        extreme = flipped <= (observed + tol)[:, None]
    else:
        extreme = flipped >= (observed - tol)[:, None]
    resamples = signs.shape[1]
    p = (np.count_nonzero(extreme, axis=1) + 1) / (resamples + 1)
    # all differences zero: no evidence of any change
    return np.where(np.abs(diffs).max(axis=1) == 0, 1.0, p)


def draw_stats(
    base: np.ndarray,
    pr: np.ndarray,
    idx: np.ndarray,
    signs: np.ndarray,
    margins: Sequence[float] = (TOLERANCE,),
    full: bool = True,
    one_sided: bool = True,
) -> Stats:
    """Stats of the draws ``idx`` (draws × n query positions) of one change, whose values
    are ``base`` and ``pr`` (metric × query). A test is run only on the draws whose
    decision can depend on it: the two-sided p of a metric where it drops > 5% (every
    rule using it requires that), the one-sided p where NDCG@10 drops at all; elsewhere
    p is 1. Without ``full``, only NDCG@10's one-sided p is computed."""
    n = idx.shape[1]
    b, p = base[:, idx], pr[:, idx]  # (metrics, draws, n)
    drop = relative_drops(b.sum(axis=2), p.sum(axis=2), n)
    diffs = p - b
    p2 = np.ones_like(drop)
    p1 = np.ones(drop.shape[1])
    if one_sided:
        down = drop[NDCG] > TIE_EPSILON
        p1[down] = flip_p(diffs[NDCG][down], signs, "less")
    p_ni: dict[float, np.ndarray] = {}
    if full:
        for m in range(len(METRICS)):
            rows = drop[m] > TOLERANCE + TIE_EPSILON
            p2[m, rows] = flip_p(diffs[m][rows], signs, "two")
        for margin in margins:
            p_ni[margin] = flip_p(p[NDCG] - (1.0 - margin) * b[NDCG], signs, "greater")
    lost = np.count_nonzero((b[MRR] > 0) & (p[MRR] == 0), axis=1)
    return Stats(n=n, drop=drop, p2=p2, p1=p1, p_ni=p_ni, lost=lost)


# ---------------------------------------------------------------- the rules


@dataclass(frozen=True)
class Rule:
    """A gate rule: ``fails(stats)`` → bool per draw; ``flags`` (review, not fail) too.
    ``pooled``: applied to three datasets of N drawn from the same change."""

    name: str
    definition: str
    fails: Callable[[Stats], np.ndarray]
    flags: Callable[[Stats], np.ndarray] | None = None
    pooled: bool = False
    tests: str = "full"  # the tests it reads: "full", "one" (NDCG@10 one-sided) or "none"


def beyond(stats: Stats, metric: int, threshold: float) -> np.ndarray:
    return np.asarray(stats.drop[metric] > threshold + TIE_EPSILON)


def any_metric(stats: Stats, threshold: float, alpha: float | None = None) -> np.ndarray:
    """The product's row status over the four metrics: a drop beyond ``threshold`` is a
    regression unless ``alpha`` is set and its two-sided p is at least ``alpha``."""
    fails = np.zeros(stats.drop.shape[1], dtype=bool)
    for m in range(len(METRICS)):
        hit = beyond(stats, m, threshold)
        if alpha is not None:
            hit &= stats.p2[m] < alpha
        fails |= hit
    return fails


def head(threshold: float, alpha: float | None = None, side: str = "two") -> Callable:
    """NDCG@10 alone: its drop beyond ``threshold``, with the test at ``alpha`` if set."""

    def fails(stats: Stats) -> np.ndarray:
        hit = beyond(stats, NDCG, threshold)
        if alpha is not None:
            hit &= (stats.p2[NDCG] if side == "two" else stats.p1) < alpha
        return hit

    return fails


def combined(high: float, low: float, alpha: float) -> Callable:
    """Fail beyond ``high``; between ``low`` and ``high`` only when the one-sided test
    gives p < ``alpha``."""

    def fails(stats: Stats) -> np.ndarray:
        tested = beyond(stats, NDCG, low) & (stats.p1 < alpha)
        return beyond(stats, NDCG, high) | tested

    return fails


def non_inferior(margin: float, alpha: float, low: float | None = None) -> Callable:
    """Fail unless non-inferiority at ``margin`` is shown: the one-sided sign-flip test of
    H0 "NDCG@10 is ≥ margin worse" (mean of PR − (1 − margin)·base ≤ 0) must give
    p < ``alpha``. With ``low``, only drops beyond ``low`` are tested (smaller pass)."""

    def fails(stats: Stats) -> np.ndarray:
        hit = stats.p_ni[margin] >= alpha
        if low is not None:
            hit &= beyond(stats, NDCG, low)
        return hit

    return fails


def scaled_lost(per_25: float) -> Callable[[Stats], np.ndarray]:
    def fails(stats: Stats) -> np.ndarray:
        return np.asarray(stats.lost > per_25 * stats.n / 25)

    return fails


def either(*rules: Callable[[Stats], np.ndarray]) -> Callable[[Stats], np.ndarray]:
    def fails(stats: Stats) -> np.ndarray:
        out = rules[0](stats)
        for rule in rules[1:]:
            out = out | rule(stats)
        return out

    return fails


def rules() -> list[Rule]:
    out = [
        Rule("P1_tol5_any4", "any of the four metrics drops > 5%", lambda s: any_metric(s, 0.05)),
        Rule(
            "P2_sig05_2sided",
            "P1, and that drop's two-sided p < 0.05",
            lambda s: any_metric(s, 0.05, 0.05),
        ),
        Rule(
            "P2i_init_sig05_mrq2",
            "P2, or more than 2 queries lose their first hit",
            either(lambda s: any_metric(s, 0.05, 0.05), lambda s: s.lost > 2),
        ),
        Rule("P3d_tol5_head", "NDCG@10 alone drops > 5%", head(0.05), tests="none"),
        Rule("P3e_mid2.5_ndcg", "NDCG@10 alone drops > 2.5%", head(0.025), tests="none"),
        Rule(
            "B_band5_flag2.5",
            "NDCG@10: fail > 5%, flag for review 2.5–5%",
            head(0.05),
            flags=lambda s: beyond(s, NDCG, 0.025) & ~beyond(s, NDCG, 0.05),
        ),
    ]
    for threshold in (0.0, 0.01, 0.015, 0.02, 0.03, 0.04, 0.075, 0.1):
        out.append(
            Rule(
                f"T_ndcg_{threshold * 100:g}",
                f"NDCG@10 alone drops > {threshold:.1%}",
                head(threshold),
                tests="none",
            )
        )
    for threshold in (0.0, 0.025, 0.05):
        for alpha in (0.05, 0.1, 0.2, 0.3):
            out.append(
                Rule(
                    f"O1_{threshold * 100:g}_a{alpha:g}",
                    f"NDCG@10 drops > {threshold:.1%} and one-sided p < {alpha:g}",
                    head(threshold, alpha, side="one"),
                    tests="one",
                )
            )
    for alpha in (0.05, 0.1, 0.2, 0.3, 0.5):
        out.append(
            Rule(
                f"NI_m5_a{alpha:g}",
                f"fail unless H0 'NDCG@10 ≥ 5% worse' is rejected one-sided at {alpha:g}",
                non_inferior(TOLERANCE, alpha),
            )
        )
        out.append(
            Rule(
                f"NI_m5_a{alpha:g}_over0",
                f"NDCG@10 drops at all and H0 'NDCG@10 ≥ 5% worse' is not rejected at {alpha:g}",
                non_inferior(TOLERANCE, alpha, low=0.0),
            )
        )
    for high in (0.05, 0.075):
        for low in (0.0, 0.01, 0.02):
            for alpha in (0.1, 0.2, 0.3):
                out.append(
                    Rule(
                        f"C_{high * 100:g}_{low * 100:g}_a{alpha:g}",
                        f"NDCG@10 drops > {high:.1%}, or > {low:.1%} with one-sided p < {alpha:g}",
                        combined(high, low, alpha),
                    )
                )
    for per_25 in (2.0, 4.0):
        out.append(
            Rule(
                f"P2_mrq{per_25:g}per25",
                f"P2, or more than {per_25:g} per 25 queries lose their first hit",
                either(lambda s: any_metric(s, 0.05, 0.05), scaled_lost(per_25)),
            )
        )
        out.append(
            Rule(
                f"P3e_mrq{per_25:g}per25",
                f"P3e, or more than {per_25:g} per 25 queries lose their first hit",
                either(head(0.025), scaled_lost(per_25)),
            )
        )
    return out


POOLED = ("P3e_mid2.5_ndcg", "T_ndcg_2", "O1_0_a0.2", "C_5_0_a0.2", "C_5_1_a0.2", "C_5_2_a0.2")
# (pooled rule, per-dataset guard): fail when the pooled rule fails or any one dataset fails
# the guard ("POOL3:<rule>+ANY3:<guard>"; the guard the rule itself: per dataset or pooled).
GUARDED = (
    ("P3e_mid2.5_ndcg", "P3e_mid2.5_ndcg"),
    ("P3e_mid2.5_ndcg", "P3d_tol5_head"),
    ("P3e_mid2.5_ndcg", "T_ndcg_7.5"),
    ("P3e_mid2.5_ndcg", "T_ndcg_10"),
)


# ---------------------------------------------------------------- simulating


@dataclass
class Study:
    """Fail (and flag) rates per rule, N and change, with each change's true effect."""

    effects: np.ndarray  # (changes,) relative NDCG@10 change over all queries
    fails: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)  # rule→N→(changes,)
    flags: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)


def changes(variants: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(variants) for b in range(variants) if a != b]


def true_effects(values: np.ndarray, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    means = values[:, NDCG, :].mean(axis=1)
    return np.array([(means[b] - means[a]) / means[a] for a, b in pairs])


def simulate(
    values: np.ndarray,
    all_rules: Sequence[Rule],
    *,
    sizes: Iterable[int],
    draws: int,
    resamples: int,
    seed: int,
    pools: int = 3,
) -> Study:
    """Every rule on ``draws`` golden sets per change and N. Pooled rules see ``pools``
    datasets of N from the same change (their stats are those of the 3N queries), plus
    "any dataset fails" of a per-dataset rule (``ANY3:<rule>``)."""
    pairs = changes(values.shape[0])
    study = Study(effects=true_effects(values, pairs))
    queries = values.shape[2]
    by_name = {rule.name: rule for rule in all_rules}
    all_rules = list(by_name.values())
    level = max((rule.tests for rule in all_rules), key=("none", "one", "full").index)
    pooled_rules = [by_name[name] for name in POOLED if name in by_name]
    guarded = [(by_name[p], by_name[g]) for p, g in GUARDED if p in by_name and g in by_name]
    for n in sizes:
        signs = sign_patterns(n, resamples, seed)
        signs_pooled = sign_patterns(pools * n, resamples, seed)
        results: dict[str, list[np.ndarray]] = {}
        flags: dict[str, list[np.ndarray]] = {}
        for number, (a, b) in enumerate(pairs):
            rng = np.random.default_rng([seed, n, number])
            idx = rng.integers(0, queries, size=(draws, pools * n))
            stats = draw_stats(
                values[a],
                values[b],
                idx[:, :n],
                signs,
                full=level == "full",
                one_sided=level != "none",
            )
            for rule in all_rules:
                results.setdefault(rule.name, []).append(rule.fails(stats).mean())
                if rule.flags is not None:
                    flags.setdefault(rule.name, []).append(rule.flags(stats).mean())
            if not pooled_rules and not guarded:
                continue
            one = level != "none"
            pooled = draw_stats(values[a], values[b], idx, signs_pooled, full=False, one_sided=one)
            parts = [stats] + [
                draw_stats(
                    values[a],
                    values[b],
                    idx[:, k * n : (k + 1) * n],
                    signs,
                    full=False,
                    one_sided=one,
                )
                for k in range(1, pools)
            ]
            for rule in pooled_rules:
                results.setdefault(f"POOL3:{rule.name}", []).append(rule.fails(pooled).mean())
                any_part = np.any([rule.fails(part) for part in parts], axis=0)
                results.setdefault(f"ANY3:{rule.name}", []).append(any_part.mean())
            for rule, guard in guarded:
                either_way = rule.fails(pooled) | np.any([guard.fails(p) for p in parts], axis=0)
                name = f"POOL3:{rule.name}+ANY3:{guard.name}"
                results.setdefault(name, []).append(either_way.mean())
        for name, rates in results.items():
            study.fails.setdefault(name, {})[n] = np.array(rates)
        for name, rates in flags.items():
            study.flags.setdefault(name, {})[n] = np.array(rates)
        print(f"N={n} done", file=sys.stderr, flush=True)
    return study


def rates(effects: np.ndarray, fails: np.ndarray, flags: np.ndarray | None = None) -> dict:
    """The table's columns, in % (None where no change falls in the band)."""
    drop = -effects

    def mean(mask: np.ndarray, of: np.ndarray) -> float | None:
        return float(100 * of[mask].mean()) if mask.any() else None

    out: dict[str, float | None] = {}
    for (low, high), column in zip(FP_BANDS, COLUMNS[:3], strict=True):
        out[column] = mean((drop > low) & (drop <= high), 1 - fails)
    out["FF0-5"] = mean((effects >= 0) & (effects <= 0.05), fails)
    out["FF>5"] = mean(effects > 0.05, fails)
    out["FFall"] = mean(effects >= 0, fails)
    out["near0"] = mean(np.abs(effects) <= 0.01, fails)
    zero_five = (effects >= 0) & (effects <= 0.05)
    out["flag0-5"] = None if flags is None else mean(zero_five, flags)
    out["D80"] = detectable(drop, fails)
    return out


def detectable(drop: np.ndarray, fails: np.ndarray, power: float = 0.8) -> float | None:
    """The true NDCG@10 drop (in %) caught with ``power``: fail rates averaged in bins of
    true drop, made non-decreasing (a running maximum, as a rule fails larger drops at
    least as often), and interpolated where they first reach ``power``."""
    edges = np.array([0, 2.5, 5, 7.5, 10, 12.5, 15, 17.5, 20, 25, 30, 40, 50, 75, 100]) / 100
    centres, levels = [], []
    for low, high in itertools.pairwise(edges):
        mask = (drop > low) & (drop <= high)
        if mask.any():
            centres.append(drop[mask].mean())
            levels.append(fails[mask].mean())
    if not levels:
        return None
    levels_arr = np.maximum.accumulate(np.array(levels))
    above = np.nonzero(levels_arr >= power)[0]
    if above.size == 0:
        return math.inf
    i = int(above[0])
    if i == 0:
        return float(100 * centres[0])
    x0, x1, y0, y1 = centres[i - 1], centres[i], levels_arr[i - 1], levels_arr[i]
    return float(100 * (x0 + (power - y0) * (x1 - x0) / (y1 - y0)))


def table(study: Study, names: Iterable[str], sizes: Iterable[int]) -> list[str]:
    lines = ["| rule | N | " + " | ".join(COLUMNS) + " |", "|---|--:|" + "--:|" * len(COLUMNS)]
    for name in names:
        for n in sizes:
            flags = study.flags.get(name, {}).get(n)
            row = rates(study.effects, study.fails[name][n], flags)
            lines.append(f"| {name} | {n} | " + " | ".join(_cell(row[c]) for c in COLUMNS) + " |")
    return lines


def _cell(value: float | None) -> str:
    if value is None:
        return "–"
    if math.isinf(value):
        return ">100"
    return f"{value:.0f}"


SUMMARY = ("FP5-10", "FP10-20", "FF0-5", "near0", "D80")


def summary(stored: Mapping[str, Any], sizes: Sequence[int] = (25, 100)) -> list[str]:
    """One row per rule: its shortfall and the target columns at 25 and 100 queries."""
    head = " | ".join(f"{c} @{n}" for n in sizes for c in SUMMARY)
    lines = [f"| rule | shortfall | {head} |", "|---|--:|" + "--:|" * (len(SUMMARY) * len(sizes))]
    for name, by_n in stored["rates"].items():
        rows = {int(n): row for n, row in by_n.items()}
        cells = " | ".join(_cell(rows[n][c]) for n in sizes for c in SUMMARY)
        lines.append(f"| {name} | {shortfall(rows):.1f} | {cells} |")
    return lines


# ---------------------------------------------------------------- choosing a rule

# (N, column, target in %): the gate's targets for a golden set of 25 and of 100 queries.
TARGETS = (
    (25, "FP10-20", 10.0),
    (25, "FP5-10", 20.0),
    (25, "FF0-5", 10.0),
    (100, "FP5-10", 10.0),
    (100, "FF0-5", 5.0),
)


def shortfall(row_by_n: Mapping[int, Mapping[str, float | None]]) -> float:
    """Points by which a rule misses the targets, summed (0: every target met)."""
    total = 0.0
    for n, column, target in TARGETS:
        value = row_by_n[n][column]
        total += max(0.0, (value or 0.0) - target)
    return total


def choose(tables: Mapping[str, Mapping[str, Mapping[int, Mapping[str, float | None]]]]) -> str:
    """Cross-validation: on each collection, the rule with the least shortfall (ties: the
    lower sum of the five rates), shown with its rates on every other collection."""
    lines = []
    for chosen_on, rows in tables.items():
        ranked = sorted(
            (name for name in rows if not name.startswith(("POOL3:", "ANY3:"))),
            key=lambda name: (
                round(shortfall(rows[name]), 6),
                sum((rows[name][n][c] or 0.0) for n, c, _ in TARGETS),
            ),
        )
        best = ranked[0]
        lines.append(
            f"chosen on {chosen_on}: {best} (shortfall {shortfall(rows[best]):.1f}); "
            f"runner-up {ranked[1]} ({shortfall(rows[ranked[1]]):.1f})"
        )
        for check_on, other in tables.items():
            if check_on == chosen_on:
                continue
            got = ", ".join(f"N={n} {c} {_cell(other[best][n][c])} (≤{t:g})" for n, c, t in TARGETS)
            lines.append(f"  checked on {check_on}: shortfall {shortfall(other[best]):.1f}: {got}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the simulated judge


def judge_qrels(
    qrels: Mapping[str, Mapping[str, int]],
    pool: Mapping[str, set[str]],
    kappa: float,
    seed: int,
) -> dict[str, dict[str, int]]:
    """Binary judge labels for every pooled pair: the human label (grade ≥ 1) with
    probability κ, else a random label drawn with the pool's rate of relevant pairs."""
    rng = np.random.default_rng([seed, round(kappa * 1000)])
    pairs = [(q, d) for q in sorted(pool, key=_natural) for d in sorted(pool[q])]
    truth = np.array([qrels.get(q, {}).get(d, 0) > 0 for q, d in pairs])
    rate = truth.mean()
    keep = rng.random(truth.size) < kappa
    label = np.where(keep, truth, rng.random(truth.size) < rate)
    out: dict[str, dict[str, int]] = {}
    for (q, d), relevant in zip(pairs, label, strict=True):
        if relevant:
            out.setdefault(q, {})[d] = 1
    return out


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    observed = float((a == b).mean())
    chance = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    return math.nan if chance >= 1 else (observed - chance) / (1 - chance)


def judged_values(
    directory: Path, runs: Mapping[str, Path], folder: Path, kappa: float, seed: int
) -> tuple[list[str], np.ndarray, float]:
    """Per-query values of every variant scored with the simulated judge's labels (pool:
    the top 10 of every variant), and the κ the labels have against the qrels."""
    qrels = read_qrels(directory / "qrels" / "test.tsv")
    pool: dict[str, set[str]] = {}
    for run in runs.values():
        for query, docs in top_k(run).items():
            if query in qrels:
                pool.setdefault(query, set()).update(docs)
    labels = judge_qrels(qrels, pool, kappa, seed)
    path = folder / f"judge_k{kappa:g}_s{seed}.tsv"
    text = "".join(f"{q} 0 {d} {g}\n" for q in labels for d, g in sorted(labels[q].items()))
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    pairs = [(q, d) for q in pool for d in pool[q]]
    human = np.array([qrels.get(q, {}).get(d, 0) > 0 for q, d in pairs])
    judged = np.array([d in labels.get(q, {}) for q, d in pairs])
    queries, _ = per_query_values(directory / "qrels" / "test.tsv", runs, folder / "per_query.json")
    cache = folder / f"judge_k{kappa:g}_s{seed}.json"
    _, values = per_query_values(path, runs, cache, queries)
    return queries, values, cohen_kappa(human, judged)


def simulate_tier(
    human: np.ndarray,
    judged: np.ndarray,
    rule: Rule,
    *,
    human_n: int,
    tiers: Sequence[int],
    draws: int,
    resamples: int,
    seed: int,
) -> dict[int, np.ndarray]:
    """Fail rates per change of ``rule`` applied to the human set of ``human_n`` pooled
    with a judged tier of ``t`` queries (0: the human set alone). Human and tier queries
    are drawn independently from the collection's judged queries; the human set's values
    come from the qrels, the tier's from the judge."""
    pairs = changes(human.shape[0])
    queries = human.shape[2]
    out: dict[int, np.ndarray] = {}
    for tier in tiers:
        n = human_n + tier
        signs = sign_patterns(n, resamples, seed)
        rates_by_change = []
        for number, (a, b) in enumerate(pairs):
            rng = np.random.default_rng([seed, n, number, 7])
            idx = rng.integers(0, queries, size=(draws, n))
            base = np.concatenate(
                [human[a][:, idx[:, :human_n]], judged[a][:, idx[:, human_n:]]], axis=2
            )
            pr = np.concatenate(
                [human[b][:, idx[:, :human_n]], judged[b][:, idx[:, human_n:]]], axis=2
            )
            stats = _stats_of(base, pr, signs, rule.tests)
            rates_by_change.append(rule.fails(stats).mean())
        out[tier] = np.array(rates_by_change)
    return out


def _stats_of(base: np.ndarray, pr: np.ndarray, signs: np.ndarray, tests: str) -> Stats:
    """draw_stats of values already drawn, (metric, draws, n) each, with the tests a rule
    reads (the others left at p = 1)."""
    metrics, draws, n = base.shape
    flat_b = base.reshape(metrics, draws * n)
    flat_p = pr.reshape(metrics, draws * n)
    idx = np.arange(draws * n).reshape(draws, n)
    return draw_stats(flat_b, flat_p, idx, signs, full=tests == "full", one_sided=tests != "none")


# ---------------------------------------------------------------- the product's test


def check_product(
    values: np.ndarray, *, sizes: Sequence[int], samples: int, resamples: int, seed: int
) -> tuple[int, int]:
    """How often the vectorised two-sided test and the product's ``sign_flip_p_value``
    (seed 0, 10,000 resamples) agree at 0.05 on NDCG@10, over ``samples`` random draws."""
    from retrieval_eval.score.stats import sign_flip_p_value

    pairs = changes(values.shape[0])
    rng = np.random.default_rng([seed, 99])
    agree = 0
    for _ in range(samples):
        n = int(rng.choice(sizes))
        a, b = pairs[int(rng.integers(len(pairs)))]
        idx = rng.integers(0, values.shape[2], size=(1, n))
        diffs = values[b, NDCG, idx[0]] - values[a, NDCG, idx[0]]
        ours = flip_p(diffs[None, :], sign_patterns(n, resamples, seed), "two")[0]
        theirs = sign_flip_p_value(diffs)
        agree += (ours < 0.05) == (theirs < 0.05)
    return agree, samples


# The bench's rules that are named rules of the product's GatePolicy:
# bench name -> (product rule, significance, datasets pooled).
PRODUCT_RULES: dict[str, tuple[str, float | None, int]] = {
    "P1_tol5_any4": ("any-metric", None, 1),
    "P2_sig05_2sided": ("any-metric", 0.05, 1),
    "P3d_tol5_head": ("headline", None, 1),
    "P3e_mid2.5_ndcg": ("headline-half", None, 1),
    "B_band5_flag2.5": ("headline-bands", None, 1),
    "O1_0_a0.05": ("one-sided", None, 1),
    "C_5_1_a0.2": ("combined", None, 1),
    "NI_m5_a0.2_over0": ("non-inferiority", None, 1),
    "POOL3:P3e_mid2.5_ndcg": ("headline-pooled", None, 3),
}
PRODUCT_METRICS = ("ndcg@10", "mrr@10", "p@5", "recall@10")  # METRICS' names in reports


def check_rules(
    values: np.ndarray, *, sizes: Sequence[int], samples: int, resamples: int, seed: int
) -> dict[str, tuple[int, int]] | None:
    """How often each bench rule and the product's own rule (``compare/rules.py``'s
    ``judge_run`` under a ``GatePolicy`` naming it) give the same verdict, on ``samples``
    random draws each. None when this checkout has no such module."""
    try:
        from retrieval_eval.compare.rules import judge_run
        from retrieval_eval.results import GatePolicy
    except ImportError:
        return None
    by_name = {rule.name: rule for rule in rules()}
    pairs = changes(values.shape[0])
    rng = np.random.default_rng([seed, 98])
    out: dict[str, tuple[int, int]] = {}
    for name, (product_rule, significance, pools) in PRODUCT_RULES.items():
        rule = by_name[name.removeprefix("POOL3:")]
        policy = GatePolicy(
            rule=product_rule,  # type: ignore[arg-type]
            tolerance=TOLERANCE,
            headline=PRODUCT_METRICS[NDCG],
            gated=PRODUCT_METRICS,
            significance=significance,
            seed=seed,
        )
        agree = 0
        for _ in range(samples):
            n = int(rng.choice(sizes))
            a, b = pairs[int(rng.integers(len(pairs)))]
            idx = rng.integers(0, values.shape[2], size=(1, pools * n))
            stats = draw_stats(values[a], values[b], idx, sign_patterns(pools * n, resamples, seed))
            ours = bool(rule.fails(stats)[0])
            datasets = {
                f"d{k}.jsonl": {
                    metric: (
                        values[a, m, idx[0, k * n : (k + 1) * n]].tolist(),
                        values[b, m, idx[0, k * n : (k + 1) * n]].tolist(),
                    )
                    for m, metric in enumerate(PRODUCT_METRICS)
                }
                for k in range(pools)
            }
            theirs = judge_run(datasets, policy).failed
            agree += ours == theirs
        out[name] = (agree, samples)
    return out


# ---------------------------------------------------------------- the command


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection", nargs="?", type=Path, help="a BEIR folder")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(".gate-power"),
        help="cache of the variant runs and per-query values",
    )
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default="", help="comma-separated rule names (default all)")
    parser.add_argument("--json", type=Path, help="write every rate here")
    parser.add_argument("--check-product", type=int, default=0, metavar="DRAWS")
    parser.add_argument(
        "--check-rules",
        type=int,
        default=0,
        metavar="DRAWS",
        help="the bench's rules against the product's, DRAWS draws each",
    )
    parser.add_argument("--judge", action="store_true", help="the simulated-judge table")
    parser.add_argument("--judge-only", action="store_true", help="only the judge's table")
    parser.add_argument("--judge-rule", default="C_5_1_a0.2", help="comma-separated rules")
    parser.add_argument("--judge-draws", type=int, default=200, help="per judge")
    parser.add_argument("--judge-seeds", type=int, default=3, help="judges per κ")
    parser.add_argument("--choose", nargs="+", type=Path, metavar="JSON")
    parser.add_argument("--show", type=Path, metavar="JSON", help="print a stored --json's table")
    parser.add_argument("--summary", type=Path, metavar="JSON", help="one row per rule, N 25, 100")
    args = parser.parse_args(argv)
    if args.summary:
        print("\n".join(summary(json.loads(args.summary.read_text()))))
        return 0
    if args.show:
        stored = json.loads(args.show.read_text())
        wanted = args.rules.split(",") if args.rules else list(stored["rates"])
        print("| rule | N | " + " | ".join(COLUMNS) + " |")
        print("|---|--:|" + "--:|" * len(COLUMNS))
        for name in wanted:
            for n, row in stored["rates"][name].items():
                print(f"| {name} | {n} | " + " | ".join(_cell(row[c]) for c in COLUMNS) + " |")
        return 0
    if args.choose:
        tables = {
            path.stem: {
                name: {int(n): row for n, row in by_n.items()}
                for name, by_n in json.loads(path.read_text())["rates"].items()
            }
            for path in args.choose
        }
        print(choose(tables))
        return 0
    if args.collection is None:
        parser.error("a collection (BEIR folder) is required")
    directory: Path = args.collection
    folder = args.work / collection_name(directory)
    names = args.variants.split(",")
    runs = {name: run_variant(directory, name, folder) for name in names}
    queries, values = per_query_values(
        directory / "qrels" / "test.tsv", runs, folder / "per_query.json"
    )
    sizes = [int(n) for n in args.sizes.split(",")]
    all_rules = rules()
    if args.rules:
        wanted = set(args.rules.split(","))
        all_rules = [r for r in all_rules if r.name in wanted]
    print(
        f"{collection_name(directory)}: {len(queries)} judged queries, {len(names)} variants, "
        f"{len(changes(len(names)))} changes, {args.draws} draws per change and N"
    )
    means = values[:, NDCG, :].mean(axis=1)
    print("NDCG@10: " + ", ".join(f"{n} {m:.4f}" for n, m in zip(names, means, strict=True)))
    if args.check_product:
        agree, total = check_product(
            values,
            sizes=sizes,
            samples=args.check_product,
            resamples=args.resamples,
            seed=args.seed,
        )
        print(f"two-sided test at 0.05, vectorised vs the product's: {agree}/{total} agree")
    if args.check_rules:
        checked = check_rules(
            values,
            sizes=sizes,
            samples=args.check_rules,
            resamples=args.resamples,
            seed=args.seed,
        )
        if checked is None:
            print("this checkout has no compare/rules.py: the product's rules are not checked")
        for name, (agree, total) in (checked or {}).items():
            product = PRODUCT_RULES[name][0]
            print(f"{name} vs the product's {product}: {agree}/{total} verdicts agree")
        if args.json:
            args.json.write_text(json.dumps({"check_rules": checked}, indent=1))
        return 0
    if args.judge_only:
        judged = judge_table(directory, runs, folder, values, args)
        if args.json:
            args.json.write_text(json.dumps({"judge": judged}, indent=1))
        return 0
    study = simulate(
        values, all_rules, sizes=sizes, draws=args.draws, resamples=args.resamples, seed=args.seed
    )
    names_out = list(study.fails)
    print("\n".join(table(study, names_out, sizes)))
    output: dict[str, Any] = {
        "collection": collection_name(directory),
        "queries": len(queries),
        "variants": names,
        "rates": {
            name: {
                n: rates(study.effects, study.fails[name][n], study.flags.get(name, {}).get(n))
                for n in sizes
            }
            for name in names_out
        },
        "definitions": {rule.name: rule.definition for rule in all_rules},
    }
    if args.json:
        args.json.write_text(json.dumps(output, indent=1))
    if args.judge:
        output["judge"] = judge_table(directory, runs, folder, values, args)
        if args.json:
            args.json.write_text(json.dumps(output, indent=1))
    return 0


def judge_table(
    directory: Path,
    runs: Mapping[str, Path],
    folder: Path,
    values: np.ndarray,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Per rule: the human set of 25 alone, then with a judged tier of 100, 200 and 400
    queries for a judge of κ 0.4, 0.6 and 0.8, the rule applied to both sets together.
    A judge's random labels are fixed per (query, document), so one judge favours some
    variants by chance: each κ is ``--judge-seeds`` judges, ``--judge-draws`` draws each,
    and the rates are their mean."""
    by_name = {rule.name: rule for rule in rules()}
    effects = true_effects(values, changes(values.shape[0]))
    seeds = range(args.seed, args.seed + args.judge_seeds)
    judges = {
        kappa: [judged_values(directory, runs, folder, kappa, seed) for seed in seeds]
        for kappa in KAPPAS
    }
    out: dict[str, Any] = {}
    columns = ("FP5-10", "FP10-20", "FP>20", "FF0-5", "FFall", "near0", "D80")
    for name in args.judge_rule.split(","):
        rule = by_name[name]
        print(f"\njudged tier, rule {name}: 25 human queries + a tier of t judged queries")
        print("| judge κ (measured) | tier | " + " | ".join(columns) + " |")
        print("|---|--:|" + "--:|" * len(columns))
        rows: dict[str, Any] = {}
        for number, kappa in enumerate(KAPPAS):
            tiers = TIERS if number == 0 else TIERS[1:]
            fails: dict[int, list[np.ndarray]] = {}
            for seed, (_, judged, _) in zip(seeds, judges[kappa], strict=True):
                by_tier = simulate_tier(
                    values,
                    judged,
                    rule,
                    human_n=25,
                    tiers=tiers,
                    draws=args.judge_draws,
                    resamples=args.resamples,
                    seed=seed,
                )
                for tier, rate in by_tier.items():
                    fails.setdefault(tier, []).append(rate)
            measured = float(np.mean([m for _, _, m in judges[kappa]]))
            for tier, per_seed in fails.items():
                row = rates(effects, np.mean(per_seed, axis=0))
                label = "human alone" if tier == 0 else f"{kappa:g} ({measured:.2f})"
                rows["human" if tier == 0 else f"{kappa:g}/{tier}"] = {**row, "kappa": measured}
                cells = " | ".join(_cell(row[c]) for c in columns)
                print(f"| {label} | {tier} | {cells} |", flush=True)
        out[name] = rows
    return out


KAPPAS = (0.4, 0.6, 0.8)
TIERS = (0, 100, 200, 400)


if __name__ == "__main__":
    raise SystemExit(main())
