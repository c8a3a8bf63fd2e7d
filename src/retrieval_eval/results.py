"""What one run measured and decided: the model behind report.json and report.md.

Everything here is plain data (pydantic, so report.json has a published JSON
Schema generated from these classes). Per-query values are kept, not only the
means, because the paired test, the "regressed most" lists and the baseline
all need them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from retrieval_eval.vocabulary import (
    LOWER_IS_BETTER,
    STATUS_DESCRIPTION_LIMIT,
    AgreementSource,
    RowStatus,
    TierReason,
    Verdict,
)

REPORT_SCHEMA_VERSION = 1


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- the gate's policy --------------------------------------------------------------------

RuleName = Literal[
    "any-metric",
    "headline",
    "headline-half",
    "headline-bands",
    "one-sided",
    "combined",
    "non-inferiority",
    "headline-pooled",
    "scaled-queries",
]
# The seed's rule, and what "tolerance" means in the docs: any gated metric drops more than it.
SEED_RULE: RuleName = "any-metric"
# The rule a configuration that names none gets, chosen by bench/gate_power.py on Cranfield
# and Vaswani (docs/benchmarks.md): of 56 candidates the closest to the targets on one
# dataset, and with three datasets pooled the only one to meet every target on both.
DEFAULT_RULE: RuleName = "headline-pooled"


@dataclass(frozen=True)
class RuleSpec:
    """How a rule reads the paired per-query values of one metric (compare/rules.py).

    Every bound is a multiple of the metric's tolerance. The observed drop is the relative
    drop of the mean over the queries both runs share."""

    summary: str  # the rule in words, for the one-line policy ("NDCG@10 drops more than 5%")
    headline_only: bool  # True: the dataset's headline metric alone decides; others reported
    fail_over: float  # an observed drop beyond this fails (subject to ``test``)
    # "two-sided": a drop beyond fail_over fails only when the two-sided paired test gives
    # p < significance (only when `significance` is set, as the seed's rule); "one-sided": a
    # drop beyond fail_over fails only when the one-sided test (H0: no drop) gives p < alpha;
    # "non-inferiority": a drop beyond fail_over fails unless the one-sided test of H0 "worse
    # by the tolerance or more" gives p < alpha.
    test: Literal["two-sided", "one-sided", "non-inferiority"] | None = None
    tested_over: float | None = None  # and a drop beyond this fails when the one-sided p < alpha
    review_over: float | None = None  # a drop beyond this (not failing) is flagged for review
    alpha: float | None = None  # the test's level when `significance` is not set
    # With two or more datasets, their headline values pooled decide; each dataset's own
    # drop beyond the bound is flagged for review (failing any one fails far more harmless
    # changes). One dataset: its own values decide.
    pooled: bool = False
    scaled_queries: bool = False  # max_regressed_queries counts per 25 queries


RULES: Mapping[RuleName, RuleSpec] = {
    "any-metric": RuleSpec("any gated metric drops more than {tol}", False, 1.0, test="two-sided"),
    "headline": RuleSpec("{head} drops more than {tol}", True, 1.0),
    "headline-half": RuleSpec("{head} drops more than {half}", True, 0.5),
    "headline-bands": RuleSpec(
        "{head} drops more than {tol} (review above {half})", True, 1.0, review_over=0.5
    ),
    "one-sided": RuleSpec(
        "{head} drops, with one-sided p < {alpha}", True, 0.0, test="one-sided", alpha=0.05
    ),
    "combined": RuleSpec(
        "{head} drops more than {tol}, or more than {fifth} with one-sided p < {alpha}",
        True,
        1.0,
        tested_over=0.2,
        alpha=0.2,
    ),
    "non-inferiority": RuleSpec(
        "{head} drops and is not shown less than {tol} worse (one-sided p < {alpha})",
        True,
        0.0,
        test="non-inferiority",
        alpha=0.2,
    ),
    "headline-pooled": RuleSpec(
        "{head} drops more than {half} over every dataset's shared queries pooled",
        True,
        0.5,
        pooled=True,
    ),
    "scaled-queries": RuleSpec(
        "{head} drops more than {half}, or more than {mrq} queries in 25 lose every hit",
        True,
        0.5,
        scaled_queries=True,
    ),
}


class GatePolicy(_Frozen):
    """Every knob that decides the verdict, built once from the settings
    (compare/policy.py) and passed down: no module reads a bare tolerance."""

    rule: RuleName = Field(description="the named rule that turns paired values into a verdict")
    tolerance: float = Field(description="the relative drop a rule's bounds are multiples of")
    tolerances: dict[str, float] = Field(
        default_factory=dict, description="metric -> its own tolerance, replacing the default"
    )
    headline: str = Field(description="the headline metric of a dataset that names none")
    dataset_headlines: dict[str, str] = Field(
        default_factory=dict, description="dataset file -> its own headline metric"
    )
    gated: tuple[str, ...] = Field(description="the metrics compared with the baseline")
    significance: float | None = Field(
        default=None, description="the paired test's level (None: the rule's own, if any)"
    )
    max_regressed_queries: int | None = None
    max_removed_share: float = 0.5
    repeats: int = 1
    seed: int = 0

    @property
    def spec(self) -> RuleSpec:
        return RULES[self.rule]

    def tolerance_for(self, metric: str) -> float:
        return self.tolerances.get(metric, self.tolerance)

    def bound_for(self, metric: str) -> float:
        """The observed drop beyond which the rule fails ``metric`` (before any test): a
        multiple of its tolerance (the tolerance itself for a rule that fails on any
        tested drop)."""
        share = self.spec.fail_over if self.spec.fail_over > 0 else 1.0
        return share * self.tolerance_for(metric)

    def headline_for(self, dataset: str) -> str:
        return self.dataset_headlines.get(dataset, self.headline)

    def is_gated(self, metric: str, dataset: str | None = None) -> bool:
        """Compared with the baseline. Under a headline rule only the dataset's headline
        metric (and latency or cost, when `gated` names them) is; the others are reported."""
        if metric not in self.gated:
            return False
        if not self.spec.headline_only or metric in LOWER_IS_BETTER or dataset is None:
            return True
        return metric == self.headline_for(dataset)

    @property
    def alpha(self) -> float | None:
        """The paired test's level: `significance` when set, else the rule's own."""
        return self.significance if self.significance is not None else self.spec.alpha

    def regressed_limit(self, queries: int) -> int | None:
        """The most shared queries that may lose every hit in a dataset of ``queries``."""
        if self.max_regressed_queries is None:
            return None
        if not self.spec.scaled_queries:
            return self.max_regressed_queries
        return math.floor(self.max_regressed_queries * queries / 25 + 1e-9)

    def describe(self, metric_label: Callable[[str], str] = str) -> str:
        """The policy in one line, as the report and the comment say it."""
        tol = self.tolerance
        text = self.spec.summary.format(
            head=metric_label(self.headline),
            tol=_share(tol),
            half=_share(tol / 2),
            fifth=_share(tol / 5),
            alpha=f"{self.alpha:g}" if self.alpha is not None else "—",
            mrq=self.max_regressed_queries if self.max_regressed_queries is not None else "—",
        )
        parts = [f"Gate: {self.rule} — fail when {text}"]
        if self.dataset_headlines:
            parts.append(
                "headline "
                + ", ".join(
                    f"{name}: {metric_label(metric)}"
                    for name, metric in sorted(self.dataset_headlines.items())
                )
            )
        if self.tolerances:
            parts.append(
                "tolerance "
                + ", ".join(
                    f"{metric_label(m)} {_share(t)}" for m, t in sorted(self.tolerances.items())
                )
            )
        if self.significance is not None and self.spec.test == "two-sided":
            parts.append(f"significance {self.significance:g}")
        if self.max_regressed_queries is not None and not self.spec.scaled_queries:
            parts.append(f"max_regressed_queries {self.max_regressed_queries}")
        if self.repeats > 1:
            parts.append(f"repeats {self.repeats}")
        return " · ".join(parts)


def _share(value: float) -> str:
    return f"{value * 100:g}%"


class Environment(_Frozen):
    """Recorded with every baseline and report, so drift between them can be explained."""

    platform: str
    python: str
    retrieval_eval: str
    chromadb: str | None
    onnxruntime: str | None
    model_sha256: str | None = Field(description="sha256 of model.onnx; None if not used")
    dense_model: str | None = Field(
        default=None,
        description="the embedding model of the dense retrievers and why, e.g. "
        "'all-MiniLM-L6-v2-int8 (auto: more than 10,000 documents)'; None if none embeds",
    )
    git_commit: str | None


class QueryResult(_Frozen):
    query_id: str
    query: str
    line: int
    query_type: str | None = None
    tags: tuple[str, ...] = ()
    ground_truth_source: str
    expect_empty: bool = False
    minimum_mrr: float | None = None
    retrieved: tuple[str, ...] = Field(description="document ids returned, best first")
    first_relevant_rank: int | None = Field(description="1-based; None if no relevant id came back")
    metrics: dict[str, float] = Field(
        description="per-query value of every measure (empty for expect_empty fixtures)"
    )
    latency_ms: float
    cost_usd: float
    judge_score: float | None = Field(default=None, description="optional LLM judge, 0..1")
    judge_fingerprint: str | None = Field(
        default=None,
        description="sha256 of the ranked (doc id, text) passages the judge reads; compared "
        "with the baseline's to decide whether its judge scores still describe this retrieval",
    )
    judge_cost_usd: float | None = Field(
        default=None, description="what this query's judge call cost; None when not judged here"
    )
    unlabelled_at_k: int | None = Field(
        default=None,
        description="how many of the retrieved top k are not in the fixture's expected ids "
        "(its golden set); None for expect_empty fixtures, which have no golden set",
    )
    unlabelled_ids: tuple[str, ...] = Field(
        default=(), description="those documents' ids, best first"
    )


class Aggregate(_Frozen):
    """Mean over the ``n`` queries that have the metric, with its 95% bootstrap interval.

    For a measure those are the scored queries; groundedness counts only fixtures with
    ``expected_keywords``, and the judge's mean the judged queries (it has no interval).
    """

    value: float
    ci_low: float | None = None
    ci_high: float | None = None
    n: int


class BreakdownRow(_Frozen):
    dimension: Literal["retrieval_type", "query_type", "tag"]
    group: str
    n: int
    metrics: dict[str, float]


class Latency(_Frozen):
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float
    count: int


class PairedTest(_Frozen):
    """Current minus baseline on the queries both share."""

    metric: str
    n_common: int
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float


class MetricRow(_Frozen):
    """One line of a dataset's table: metric | baseline | current | Δ | Δ% | threshold | status."""

    metric: str
    baseline: float | None
    current: float
    delta: float | None
    delta_pct: float | None
    threshold: str | None
    gated: bool
    status: RowStatus
    resolution: float | None = Field(
        default=None,
        description="the most one query can move this mean: the highest value a query reached "
        "(either run) over the number of queries averaged; None for latency and cost",
    )
    p_value: float | None = Field(
        default=None,
        description="the paired randomization test's p-value of this row's change (None "
        "without a baseline, or for latency and cost)",
    )


class LabelJudgement(_Frozen):
    """The LLM judge's view of one (query, document) pair: informational, never a label."""

    relevant: bool = Field(description="score at or above the judge's relevance cut (0.5)")
    score: float = Field(description="0..1, how relevant the judge found the document")
    model: str


class Hole(_Frozen):
    """An unlabelled document that newly entered a regressed query's top k: a possible
    missing label, for `retrieval-eval review --holes` to show a person."""

    doc_id: str
    rank: int = Field(description="1-based rank in this run")
    judge: LabelJudgement | None = Field(
        default=None, description="the judge's view, when the judge ran"
    )


class QueryMove(_Frozen):
    query_id: str
    query: str
    metric: str
    baseline: float
    current: float
    rank_before: int | None
    rank_after: int | None
    top_after: str | None = Field(
        default=None,
        description="id of the document this run ranks first (None: nothing came back)",
    )
    top_after_unlabelled: bool = Field(
        default=False,
        description="the document ranked first now is not in the query's golden set: a "
        "regression there is possibly a missing label",
    )
    holes: tuple[Hole, ...] = Field(
        default=(),
        description="unlabelled documents that entered the top k since the baseline "
        "(regressed queries only), best first",
    )


class FixtureFailure(_Frozen):
    """A fixture that failed its own assertion (``minimum_mrr`` or ``expect_empty``)."""

    query_id: str
    query: str
    line: int
    kind: Literal["minimum_mrr", "expect_empty"]
    message: str


class Comparison(_Frozen):
    """How the dataset fared against its baseline (absent on a baseline-establishing run)."""

    common_queries: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    added_text: dict[str, str] = Field(default_factory=dict, description="query id -> query")
    removed_text: dict[str, str] = Field(default_factory=dict, description="query id -> query")
    dataset_changed: bool
    corpus_changed: bool
    retriever_changed: bool
    retriever_changes: tuple[str, ...] = Field(
        default=(),
        description="each setting that differs from the baseline's, as `name: before → after` "
        "(a default that changed between releases shows here too)",
    )
    baseline_retriever: str | None = Field(
        default=None, description="the retriever the baseline was measured with, when known"
    )
    paired: tuple[PairedTest, ...]
    regressed_most: tuple[QueryMove, ...]
    improved_most: tuple[QueryMove, ...]
    lost_first_hit: tuple[str, ...] = Field(
        default=(),
        description="shared queries that had a relevant document in the baseline's top k "
        "and have none now",
    )


class QueryCheck(_Frozen):
    """A dataset-level check on a count of queries, beside the metric rows: fails when
    ``count`` exceeds ``limit``."""

    check: Literal["lost-first-hit", "removed-queries"]
    count: int
    limit: int
    baselined: int = Field(description="queries the baseline holds for this dataset")
    failed: bool


class RepeatSpread(_Frozen):
    """How much a retriever that is not deterministic moved between repeats of the run."""

    runs: int = Field(description="times each query was searched (the `repeats` setting)")
    means: dict[str, tuple[float, ...]] = Field(
        description="metric -> the dataset's mean in each repeat, in the order they ran"
    )
    varied: dict[str, int] = Field(
        description="metric -> how many queries did not score the same in every repeat"
    )


class JudgeSummary(_Frozen):
    """Judge scores are not deterministic and cost money, so where they came from is explicit."""

    source: Literal["judged", "carried-over", "dropped"]
    model: str | None = Field(description="the judging model (None when carried over or dropped)")
    cost_usd: float = Field(
        description="total judge cost of this run; kept apart from the retrieval cost per query"
    )
    note: str


class AnnFidelitySummary(_Frozen):
    """How much of exact search's top k the retriever's approximate index found, on the
    same stored vectors. Informational: never gated."""

    index: str = Field(
        description='the approximate index and where it lives, e.g. "HNSW, postgres"'
    )
    k: int
    queries: int = Field(description="queries searched both ways (the ann_fidelity_queries sample)")
    recall: float = Field(
        description="mean over those queries of |ANN top k ∩ exact top k| / |exact top k|"
    )


class CollapseSummary(_Frozen):
    """How the results of a retriever that collapses them itself (a framework's: LangChain,
    LlamaIndex) became documents: several chunks of one document are one hit. Counted over
    the dataset's search (the first repeat); informational."""

    results: int = Field(description="results (chunks) behind the documents returned")
    documents: int = Field(description="documents returned over the dataset's queries")
    histogram: dict[int, int] = Field(
        description="documents by how many results stood behind each, e.g. {1: 25, 2: 5}"
    )


class LabelCoverage(_Frozen):
    """How much of what the retriever returned the golden sets say anything about (like
    trec_eval's judged share of num_ret). Informational: it never changes the verdict."""

    retrieved: int = Field(description="results in the top k over the scored queries")
    labelled: int = Field(description="of those, the ones in their query's golden set")
    share: float | None = Field(description="labelled / retrieved; None when nothing came back")
    baseline_share: float | None = Field(
        default=None, description="the share the baseline recorded (None: not recorded)"
    )
    dropped: bool = Field(
        default=False,
        description="the share fell by more than 10 points since the baseline: the "
        "retriever now returns documents nobody labelled, so its scores may understate it",
    )


class Calibration(_Frozen):
    """The judge measured against the human labels a dataset already carries: expected
    documents of human-annotated fixtures are the relevant class, the top-ranked
    non-expected documents of the same queries the other."""

    model: str
    seed: int
    sample_size: int = Field(description="pairs judged (both classes)")
    labelled_relevant: int = Field(description="pairs whose document is an expected id")
    labelled_other: int = Field(description="pairs whose document is a non-expected top hit")
    true_positive: int = Field(description="expected, and the judge said relevant")
    false_negative: int = Field(description="expected, and the judge said not relevant")
    false_positive: int = Field(description="not expected, and the judge said relevant")
    true_negative: int = Field(description="not expected, and the judge said not relevant")
    accuracy: float | None = Field(description="share of pairs the judge agrees with")
    kappa: float | None = Field(
        description="Cohen's kappa: agreement beyond chance (1 perfect, 0 chance); None when "
        "undefined (every pair in one class on both sides)"
    )
    cost_usd: float
    stopped: str | None = Field(
        default=None, description="why fewer pairs were judged than sampled (the cost cap)"
    )


class Resolution(_Frozen):
    """What a dataset of this size and spread can tell apart, said in one line per dataset.

    The drop caught four times in five is a normal approximation of the rule's power on
    the paired per-query differences of the headline metric; ``queries_to_resolve`` is how
    many queries would make the 95% interval of the relative change as narrow as ± the
    tolerance."""

    metric: str
    queries: int = Field(description="queries the spread was measured on")
    source: Literal["comparison", "spread"] = Field(
        description="comparison: the paired differences against the baseline; spread: "
        "without a baseline, the per-query values themselves (a cautious stand-in)"
    )
    detectable_drop: float | None = Field(
        description="the relative drop this gate fails four times in five (None: it cannot)"
    )
    queries_to_resolve: int | None = Field(
        description="queries for a 95% interval of ± the tolerance (None: no spread seen)"
    )
    tolerance: float
    change: float | None = Field(
        default=None, description="the observed relative change of the mean (None: no baseline)"
    )
    change_low: float | None = Field(
        default=None, description="the paired 95% interval of the relative change, low end"
    )
    change_high: float | None = None


class DatasetReport(_Frozen):
    name: str = Field(description="dataset file name, e.g. hybrid.jsonl")
    retriever: str
    retriever_config: dict[str, object]
    dataset_fingerprint: str
    corpus_fingerprint: str
    setup_s: float
    num_queries: int
    num_scored: int = Field(description="queries averaged in (expect_empty fixtures are not)")
    aggregates: dict[str, Aggregate]
    latency: Latency
    rerank_latency: Latency | None = Field(
        default=None,
        description="the hybrid's rerank stage alone (inside latency); None without a reranker",
    )
    cost_per_query_usd: float
    breakdowns: tuple[BreakdownRow, ...]
    queries: tuple[QueryResult, ...]
    rows: tuple[MetricRow, ...]
    failures: tuple[FixtureFailure, ...]
    baseline_established: bool
    comparison: Comparison | None
    embedded_texts: int | None = None
    cached_embeddings: int | None = None
    queries_missing: int | None = Field(
        default=None,
        description="queries the run file (retriever run-file) did not answer, scored as empty",
    )
    judge: JudgeSummary | None = Field(
        default=None, description="how the judge column came about; None when no judge was involved"
    )
    query_checks: tuple[QueryCheck, ...] = Field(
        default=(),
        description="checks on counts of queries (`max_regressed_queries`, queries removed "
        "since the baseline); listed only when configured or when queries were removed",
    )
    repeats: RepeatSpread | None = Field(
        default=None, description="the spread between repeats; None when `repeats` is 1"
    )
    ann_fidelity: AnnFidelitySummary | None = Field(
        default=None,
        description="the approximate index's recall@k of exact search (postgres, chroma); "
        "None when not measured",
    )
    labels: LabelCoverage | None = Field(
        default=None, description="the labelled share of the results at k (informational)"
    )
    collapse: CollapseSummary | None = Field(
        default=None,
        description="how a framework retriever's results collapsed to documents; None for "
        "retrievers that do not collapse results themselves",
    )
    calibration: Calibration | None = Field(
        default=None, description="the judge's agreement with the human labels, when judged"
    )
    groundedness_left_out: str | None = Field(
        default=None,
        description="why groundedness was neither measured nor gated for this dataset (the "
        "retriever's hits carry no text); None when it was measured",
    )
    headline_metric: str | None = Field(
        default=None, description="the metric the dataset is judged and named by (the policy's)"
    )
    resolution: Resolution | None = Field(
        default=None,
        description="what this dataset's queries can resolve under the gate's rule, from "
        "this comparison's per-query spread (or, without a baseline, the run's own)",
    )


class RemovedDataset(_Frozen):
    """A dataset the baseline holds values for that this run did not find.

    It fails the gate: deleting or renaming a dataset file must not pass as
    "nothing to compare". To retire one, remove its baseline entry first.
    """

    name: str
    retriever: str | None
    baselined_queries: int
    status: RowStatus = "removed"


class ChallengerMetric(_Frozen):
    """One metric of a challenger against the reference (the gated retriever)."""

    metric: str
    reference: float = Field(description="the gated retriever's mean")
    value: float = Field(description="the challenger's mean")
    delta: float = Field(description="challenger minus reference, on the queries both scored")
    p_value: float = Field(
        description="the paired randomization test's p-value of the difference, "
        "Holm-corrected across the challengers of the dataset"
    )
    p_uncorrected: float


class ChallengerResult(_Frozen):
    """A challenger on one dataset: reported beside the gated retriever, never gated."""

    name: str
    retriever: str
    retriever_config: dict[str, object] = Field(default_factory=dict)
    metrics: tuple[ChallengerMetric, ...] = ()
    wins: int | None = Field(
        default=None, description="queries the challenger scores higher on (first measure)"
    )
    ties: int | None = None
    losses: int | None = None
    latency_p95_ms: float | None = None
    cost_per_query_usd: float | None = None
    beats: tuple[str, ...] = Field(
        default=(),
        description="the metrics on which it scores higher than the gated retriever with "
        "p < 0.05 (Holm-corrected)",
    )
    warning: str | None = Field(
        default=None, description="why it has no numbers (it failed, or could not start)"
    )


class DatasetChallengers(_Frozen):
    """The challengers evaluated on one dataset, against the gated retriever."""

    dataset: str
    group: str | None = Field(
        default=None, description="a query type (`compare`'s breakdown); None: every query"
    )
    reference: str = Field(description="the gated retriever (in `compare`, the first side)")
    num_queries: int = Field(description="queries compared (scored by both)")
    wtl_metric: str = Field(description="the metric wins, ties and losses count on")
    latency_p95_ms: float
    cost_per_query_usd: float
    challengers: tuple[ChallengerResult, ...]


class JudgeAgreement(_Frozen):
    """The judge's agreement with the human tier that the judged tier's gating rests on:
    Cohen's κ on a sample of human-labelled pairs drawn with the run's seed (both classes,
    as the calibration of each dataset), recorded with what it was measured for."""

    model: str = Field(description="the judge model the agreement was measured with")
    prompt_sha256: str = Field(description="sha256 of the judge's label prompt")
    seed: int
    sample_size: int = Field(description="pairs judged (both classes)")
    kappa: float | None = Field(description="Cohen's kappa; None when undefined")
    accuracy: float | None = None
    source: AgreementSource = Field(
        description="measured by this run, recorded in the baseline for the same judge model "
        "and prompt, or recorded for another one (stale) and not measured again"
    )
    cost_usd: float = 0.0
    stopped: str | None = Field(
        default=None, description="why fewer pairs were judged than sampled (the cost cap)"
    )


class JudgedTier(_Frozen):
    """The judged tier: queries without expected ids, scored against the LLM judge's
    judgments with trec_eval's conventions (a document nobody judged is not relevant).
    Beside the human tier, never mixed into it; it decides the verdict only while the
    judge's agreement with the human tier clears the floor."""

    queries_file: str = Field(description="the tier's queries file name")
    report: DatasetReport = Field(
        description="the tier measured and compared with the baseline's tier, as a dataset"
    )
    judged_at_k: float | None = Field(
        description="share of the top k results with a current judgment (None: nothing came back)"
    )
    results_at_k: int = Field(description="results in the top k over the tier's queries")
    judged_on_the_fly: int = Field(
        description="pairs new in the top k judged during this run (not in the judgments file)"
    )
    on_the_fly_cost_usd: float = 0.0
    judgments_written: bool = Field(
        description="the new judgments were written to the judgments file (never on a PR)"
    )
    judgments_sha256: str | None = Field(
        default=None, description="sha256 of the judgments file this run wrote (None: not written)"
    )
    agreement: JudgeAgreement | None
    kappa_floor: float
    gates: bool = Field(description="the tier took part in the verdict")
    not_gating: TierReason | None = Field(
        default=None, description="why the tier was reported and did not gate"
    )
    judge_is_reranker: bool = Field(
        default=False, description="the judge model is also the gated retriever's reranker"
    )


class RunReport(_Frozen):
    schema_version: int = REPORT_SCHEMA_VERSION
    verdict: Verdict
    headline: str = Field(description="the verdict and the numbers that decided it")
    status_description: str = Field(max_length=STATUS_DESCRIPTION_LIMIT)
    tolerance: float
    measures: tuple[str, ...]
    k: int
    baseline_path: str
    baseline_written: bool
    datasets: tuple[DatasetReport, ...]
    removed_datasets: tuple[RemovedDataset, ...] = ()
    environment: Environment
    baseline_environment: Environment | None
    duration_s: float
    history: dict[str, dict[str, tuple[float, ...]]] = Field(
        default_factory=dict,
        description="dataset -> metric -> values of the last recorded runs "
        "(retrieval-eval-history.jsonl), oldest first; this run is not included",
    )
    challengers: tuple[DatasetChallengers, ...] = Field(
        default=(),
        description="the `[challengers]` retrievers on each dataset: reported, never gated, "
        "never in the baseline or the history",
    )
    policy: GatePolicy | None = Field(
        default=None, description="every knob that decided the verdict (None: an older report)"
    )
    judged_tier: JudgedTier | None = Field(
        default=None, description="the judged tier (`[judged] enabled`), beside the datasets"
    )

    @property
    def gate_policy(self) -> GatePolicy:
        """The policy that decided this report; an older report's is the seed's rule at its
        recorded tolerance."""
        if self.policy is not None:
            return self.policy
        return GatePolicy(
            rule=SEED_RULE,
            tolerance=self.tolerance,
            headline=self.measures[0],
            gated=self.measures,
        )
