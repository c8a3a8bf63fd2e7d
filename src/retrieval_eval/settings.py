"""The one typed settings object a run is configured by.

Built once, from defaults < ``retrieval-eval.toml`` (or ``[tool.retrieval-eval]``
in ``pyproject.toml``) < overrides (command-line flags, Action inputs). Every
later stage receives this object instead of reading files or the environment,
so a run is fully described by it.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from retrieval_eval.errors import ConfigError, shown_path
from retrieval_eval.load.input_files import UTF8_BOM, wide_encoding_problem
from retrieval_eval.progress import Pace
from retrieval_eval.results import DEFAULT_RULE, RuleName
from retrieval_eval.retrieval.config import MAX_TIMEOUT_S, RetrieversConfig
from retrieval_eval.score.judge import DEFAULT_JUDGE_MODEL, JudgePricing
from retrieval_eval.vocabulary import (
    COST_PER_QUERY,
    DEFAULT_CACHE_DIR,
    GROUNDEDNESS,
    JUDGE,
    LATENCY_P95,
    LOWER_IS_BETTER,
    MODEL_DIR_ENV,
)

CONFIG_FILE_NAME = "retrieval-eval.toml"
# One line per evaluated push to the default branch; by default beside the baseline.
HISTORY_FILE = "retrieval-eval-history.jsonl"
# The whole evaluation's time bound. A GitHub-hosted job is cancelled after 6 hours, without a
# status: the cap leaves half an hour of it for the comment and the status.
TIME_LIMIT_CAP_S = 19_800.0
TIME_LIMIT_S = 3600.0


class Commit(Enum):
    """Which commit's configuration a setting is read from on a pull request."""

    # What the pull request proposes and is evaluated: the retriever and the challengers.
    PULL_REQUEST = "pull request"
    # What decides the verdict: the base commit's, unless the run is gated on the workspace
    # (`baseline-source: workspace`) or adopts retrieval-eval (the base has no configuration).
    GATE = "base"
    # Always the base commit's: what the pull request's code may see and reach, resource
    # bounds (time, sizes, prices, budgets) and where files go. The default.
    BASE = "base (always)"
    # Both commits' values together: withholding more is always safe.
    UNION = "both (union)"


# The commands that evaluate the datasets and share one preparation (`run`'s flags): a
# setting that shapes an evaluation is a flag of each.
EVALUATING = ("run", "baseline update", "embed", "merge")


@dataclass(frozen=True)
class Option:
    """The declaration of one setting, beside its type and default on the settings model.

    ``doc`` is the one line every table of settings shows. ``commands``: the commands that
    take a flag for it, by the name a user types (``"baseline update"``; ``EVALUATING``
    names the four that evaluate the datasets); ``flag``: that flag's name, when it is not
    the key's (``--key`` with ``_`` as ``-``). ``action_input``: the Action input that sets
    it (``True``: the key with ``_`` as ``-``). ``path``: it names a file or folder the run
    reads, or writes (``atomic``: a file replaced whole, so its folder is what must stay
    inside the repository). ``env``: an environment variable that sets it, for the flag and
    the Action alike.
    """

    doc: str
    commit: Commit = Commit.BASE
    commands: tuple[str, ...] = ()
    flag: str | None = None
    action_input: str | bool = False
    path: Literal["read", "written", "atomic"] | None = None
    env: str | None = None  # an environment variable that sets it (below a flag)
    action_doc: str = ""  # what the Action input's description adds to ``doc``
    # What docs/configuration.md's table of keys says of it: ``doc`` with the reasons,
    # examples and links a page has room for (empty: ``doc``).
    long_doc: str = ""


def declared(field: Any) -> Option | None:
    """The ``Option`` a model field carries, if any."""
    return next((m for m in field.metadata if isinstance(m, Option)), None)


class Threshold(BaseModel):
    """An absolute bound on one metric: ``min`` for quality, ``max`` for latency and cost.

    ``datasets`` restricts it to some dataset files (the default MRR ≥ 0.75 is a
    hybrid-retrieval target); empty means every dataset.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    min: float | None = None
    max: float | None = None
    datasets: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _one_bound(self) -> Threshold:
        if (self.min is None) == (self.max is None):
            raise ValueError("give exactly one of min or max")
        return self

    def applies_to(self, dataset: str) -> bool:
        return not self.datasets or dataset in self.datasets

    def passes(self, value: float) -> bool:
        if self.min is not None:
            return value >= self.min
        assert self.max is not None
        return value <= self.max

    def describe(self) -> str:
        return f"≥ {self.min:g}" if self.min is not None else f"≤ {self.max:g}"


# The default pass thresholds (docs/configuration.md explains each): each can be changed, or
# removed with `false`.
DEFAULT_THRESHOLDS: dict[str, Threshold] = {
    "mrr@10": Threshold(min=0.75, datasets=("hybrid.jsonl",)),
    "ndcg@10": Threshold(min=0.70),
    "p@5": Threshold(min=0.65),
    LATENCY_P95: Threshold(max=500.0),
    COST_PER_QUERY: Threshold(max=0.002),
}

DEFAULT_DATASET_RETRIEVERS: dict[str, str] = {
    "semantic.jsonl": "dense",
    "keyword.jsonl": "bm25",
    "hybrid.jsonl": "hybrid",
}

DEFAULT_MEASURES: tuple[str, ...] = ("mrr@10", "ndcg@10", "p@5", "recall@10")


class JudgeSettings(BaseModel):
    """The ``[judge]`` table. The API key is deliberately not here: files get committed,
    so only the edges read ``ANTHROPIC_API_KEY`` and hand it to the run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: Annotated[
        bool,
        Option(
            "Score each query's retrieved text with the LLM judge (needs ANTHROPIC_API_KEY).",
            commands=EVALUATING,
            flag="--judge",
            action_input="judge",
            action_doc="Set the key in the step's `env`; a fork pull request gets no secrets, so "
            "there the judge is skipped with a warning.",
        ),
    ] = False
    model: Annotated[str, Option("The judge's Claude model.")] = Field(
        default=DEFAULT_JUDGE_MODEL, min_length=1
    )
    input_usd_per_mtok: Annotated[
        float, Option("Price of a million input tokens, for the budget.")
    ] = Field(default=JudgePricing().input_usd_per_mtok, ge=0.0)
    output_usd_per_mtok: Annotated[
        float, Option("Price of a million output tokens, for the budget.")
    ] = Field(default=JudgePricing().output_usd_per_mtok, ge=0.0)
    max_retries: Annotated[int, Option("Retries of a failed judge call.")] = Field(
        default=3, ge=0, le=10
    )
    timeout_s: Annotated[float, Option("Longest one judge call may take.")] = Field(
        default=60.0, gt=0.0, le=MAX_TIMEOUT_S
    )
    # None: Anthropic's API.
    base_url: Annotated[
        str | None, Option("An Anthropic-compatible gateway the key is sent to.")
    ] = None
    max_cost_usd: Annotated[
        float,
        Option(
            "The label judgements (holes, calibration, the judged tier) stop before their spend "
            "could pass this.",
            commands=(*EVALUATING, "label"),
        ),
    ] = Field(default=1.0, ge=0.0)
    # 0: no calibration.
    calibration_sample: Annotated[
        int, Option("(query, document) pairs per dataset the judge is calibrated on.")
    ] = Field(default=20, ge=0, le=10_000)

    def pricing(self) -> JudgePricing:
        return JudgePricing(
            input_usd_per_mtok=self.input_usd_per_mtok,
            output_usd_per_mtok=self.output_usd_per_mtok,
        )


class JudgedSettings(BaseModel):
    """The ``[judged]`` table: the opt-in judged tier, queries without expected ids whose
    relevance the LLM judge decides (``retrieval-eval label``). The judge's model, prices,
    budget, retries and timeout are ``[judge]``'s. Every key is the base commit's: a pull
    request must not choose its own judged set, floor or pool."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: Annotated[
        bool, Option("Score the judged tier in runs (it is opt-in; `label` runs regardless).")
    ] = False
    queries: Annotated[
        Path,
        Option("The judged tier's queries (query_id and query, no expected ids).", path="read"),
    ] = Path("datasets/judged/queries.jsonl")
    judgments: Annotated[
        Path,
        Option(
            "The judge's judgments of the tier, one (query, document) pair a line.", path="atomic"
        ),
    ] = Path("datasets/judged/judgments.jsonl")
    pool_depth: Annotated[
        int,
        Option(
            "Top results of each retriever (gated and challengers) `label` judges.",
            commands=("label",),
        ),
    ] = Field(default=10, ge=1, le=1000)
    kappa_floor: Annotated[
        float,
        Option("The judge's agreement (Cohen's κ) with the human tier the tier's gating needs."),
    ] = Field(default=0.6, ge=-1.0, le=1.0)

    @field_validator("queries", "judgments", mode="before")
    @classmethod
    def _no_empty_path(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            raise ValueError("empty path; remove the key to use the default")
        return value


# The keys of a `[challengers.NAME]` table that are its own; every other key is a table of
# `[retrievers]` (dense, bm25, hybrid, ...), laid over the run's `[retrievers]`.
CHALLENGER_KEYS = ("retriever", "datasets")


class ChallengerConfig(BaseModel):
    """``[challengers.NAME]``: a retriever evaluated beside the gated one, report-only.

    ``retriever`` is any retriever name (``[dataset_retrievers]`` takes the same ones);
    ``retrievers`` is the run's ``[retrievers]`` with the challenger's own tables laid
    over it key by key (the file spells them ``[challengers.NAME.hybrid]`` and so on),
    so it is parsed, defaulted and resolved exactly as the gated retriever's settings.
    ``datasets``: the dataset files it is evaluated on; empty: every dataset.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    retriever: str
    datasets: tuple[str, ...] = ()
    retrievers: RetrieversConfig = Field(default_factory=RetrieversConfig)
    # Why it cannot run (a variable its service names is not set); said on its row.
    _unavailable: str | None = PrivateAttr(default=None)

    @field_validator("retriever")
    @classmethod
    def _known_retriever(cls, name: str) -> str:
        from retrieval_eval.retrieval.registry import RETRIEVER_NAMES

        if name not in RETRIEVER_NAMES:
            raise ValueError(
                f"unknown retriever {name!r}; choose one of: {', '.join(RETRIEVER_NAMES)}"
            )
        return name

    def applies_to(self, dataset: str) -> bool:
        return not self.datasets or dataset in self.datasets

    @property
    def unavailable(self) -> str | None:
        return self._unavailable

    def with_unavailable(self, reason: str) -> ChallengerConfig:
        copy = self.model_copy()
        copy._unavailable = reason
        return copy


class ProgressSettings(BaseModel):
    """When a step shows its progress (docs/configuration.md, "Progress")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    after_s: float = Field(default=Pace().after_s, ge=0.0)
    every_s: float = Field(default=Pace().every_s, ge=0.0)
    redraw_s: float = Field(default=Pace().redraw_s, ge=0.0)

    def pace(self) -> Pace:
        return Pace(after_s=self.after_s, every_s=self.every_s, redraw_s=self.redraw_s)


G, B, PR = Commit.GATE, Commit.BASE, Commit.PULL_REQUEST


class RunSettings(BaseModel):
    """Everything ``retrieval-eval run`` needs. Paths are absolute once loaded.

    Each field is one setting: its type, its default, and its ``Option`` (the line the
    documentation shows, which commit a pull request's run reads it from, and the flag and
    Action input that set it). ``retrieval_eval.config`` builds every table from them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    datasets: Annotated[
        Path,
        Option(
            "Folder of golden JSONL datasets.",
            G,
            commands=(*EVALUATING, "generate", "review"),
            action_input=True,
            path="read",
            long_doc=(
                "Folder holding `semantic.jsonl`, `keyword.jsonl`, `hybrid.jsonl` (any that exist)."
            ),
        ),
    ] = Path("datasets")
    corpus: Annotated[
        Path,
        Option(
            "Corpus to retrieve from.",
            G,
            commands=(*EVALUATING, "generate", "review", "import queries", "label"),
            action_input=True,
            path="read",
            long_doc="Markdown folder, JSONL file, BEIR folder or Bear database.",
        ),
    ] = Path("datasets/corpus")
    baseline: Annotated[
        Path,
        Option(
            "Baseline file the run is compared with (path in the repository).",
            G,
            commands=EVALUATING,
            action_input=True,
            path="atomic",
            long_doc="The committed baseline the gate compares against.",
        ),
    ] = Path("baseline.json")
    history: Annotated[
        Path | None,
        Option(
            "One line per evaluated push to the default branch. Not set: "
            f"`{HISTORY_FILE}` beside the baseline.",
            G,
            path="atomic",
            long_doc=(
                "Past runs, drawn as sparklines in the report "
                "([docs/report.md](report.md#history-and-sparklines)). The Action appends one line "
                "to it per push to the default branch. Not set: `retrieval-eval-history.jsonl` "
                "beside the baseline."
            ),
        ),
    ] = None
    baseline_update: Annotated[
        Literal["fixed", "ratchet"],
        Option(
            "On a push to the default branch: `ratchet` raises baseline.json to a passing "
            "run's values (never lowers them), so a revert of a merged gain fails; `fixed` "
            "moves it only by `baseline update`. A retriever searched with `repeats` above 1 "
            "is never ratcheted (it would keep its luckiest run).",
            G,
            action_input=True,
            long_doc=(
                '`"ratchet"`: on a push to the default branch, the Action raises each gated metric '
                "in the baseline to a passing run's value and never lowers one (latency and cost "
                "only go down), for the workflow's next step to commit "
                '([docs/action.md](action.md#a-baseline-that-keeps-gains)). `"fixed"`: only '
                "`retrieval-eval baseline update` moves it. A retriever searched with `repeats` "
                "above 1 is never ratcheted (it would keep its luckiest run). The "
                "`baseline-update` input outranks it. Read from the pushed commit; `run` ignores "
                "it."
            ),
        ),
    ] = "ratchet"
    report_dir: Annotated[
        Path,
        Option(
            "Folder for report.json, report.md and report.html.",
            G,
            action_doc="On fork pull requests, also the files `mode: publish` reads.",
            commands=EVALUATING,
            action_input=True,
            path="written",
            long_doc="Where `report.json` and `report.md` are written.",
        ),
    ] = Path("retrieval-eval-report")
    cache_dir: Annotated[
        Path,
        Option(
            "Folder for the embedding cache.",
            B,
            commands=(*EVALUATING, "compare", "beir", "tune", "label"),
            action_input=True,
            path="written",
            long_doc=(
                "Embedding cache (`embeddings/` inside); hand it to `actions/cache`, keep it out "
                "of git (a cache git tracks is not used)."
            ),
        ),
    ] = Path(DEFAULT_CACHE_DIR)
    model_dir: Annotated[
        Path | None,
        Option(
            "Installed embedding model folder. Not set: where `model install` puts it.",
            B,
            commands=(*EVALUATING, "compare", "beir", "tune", "label"),
            path="read",
            env=MODEL_DIR_ENV,
            long_doc=(
                "Where `retrieval-eval model install` put the ONNX model; the other models, the "
                'int8 copy that `[retrievers.dense] model = "auto"` chooses above 10,000 documents '
                "among them, are read from beside it. The environment variable "
                "`RETRIEVAL_EVAL_MODEL_DIR` (the container image sets it) outranks it, like "
                "`--model-dir`. Not set: chromadb's model folder."
            ),
        ),
    ] = None
    dataset_retrievers: Annotated[
        dict[str, str],
        Option(
            "The retriever each dataset file is evaluated with.",
            PR,
            long_doc=(
                "Which retriever serves each dataset file (`dense`, `bm25`, `like`, `hybrid`, "
                "`custom`, `postgres`, `chroma`, `http`, `run-file`, `qdrant`, `lancedb`, "
                "`milvus`, `langchain`, `llamaindex`; [docs/retrievers.md](retrievers.md)). A name "
                "that is none of these stops the run with exit code 2."
            ),
        ),
    ] = Field(default_factory=lambda: dict(DEFAULT_DATASET_RETRIEVERS))
    k: Annotated[
        int,
        Option("Results retrieved per query.", G, commands=(*EVALUATING, "compare")),
    ] = Field(default=10, ge=1, le=1000)
    measures: Annotated[
        tuple[str, ...],
        Option(
            "The measures computed and reported.",
            G,
            long_doc=(
                "Any of `mrr@K`, `mrr`, `ndcg@K`, `p@K`, `recall@K`, `map`, `map@K`, `hit_rate@K`, "
                "`r_precision` ([docs/metrics.md](metrics.md#measures)). Groundedness is added for "
                "fixtures with `expected_keywords`."
            ),
        ),
    ] = DEFAULT_MEASURES
    # Gated relatively against the baseline. Latency and cost are left out by default:
    # timings on shared CI runners vary by more than 5% between identical runs.
    gated: Annotated[
        tuple[str, ...] | None,
        Option(
            "Metrics gated against the baseline. Not set: every quality measure.",
            G,
            long_doc=(
                "Metrics under the relative gate. Add `latency_p95_ms` or `cost_per_query_usd` to "
                "gate them relatively too (off by default, see below). Not set: every measure and "
                "`groundedness`."
            ),
        ),
    ] = Field(default=None, validate_default=True)
    thresholds: Annotated[
        dict[str, Threshold],
        Option(
            "Absolute bounds on metrics (`false` removes one).",
            G,
            long_doc="Absolute bounds, judged on every run.",
        ),
    ] = Field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    dataset_thresholds: Annotated[
        dict[str, dict[str, Threshold | Literal[False]]],
        Option(
            "Per dataset file, replacing the general threshold on a metric.",
            G,
            long_doc=(
                "One dataset file's own thresholds, replacing the general one on the same metric "
                "(`false`: none for that file)."
            ),
        ),
    ] = Field(default_factory=dict)
    tolerance: Annotated[
        float,
        Option(
            "The gate's relative tolerance (0.05 = 5%): the default rule fails the headline "
            "metric beyond half of it, the seed's rule any gated metric beyond it.",
            G,
            commands=EVALUATING,
            action_input=True,
            long_doc=(
                "A gated metric fails when it is worse than the baseline by more than this "
                "fraction."
            ),
        ),
    ] = Field(default=0.05, ge=0.0, lt=1.0)
    tolerances: Annotated[
        dict[str, float],
        Option(
            "A metric's own tolerance, replacing `tolerance` for it.",
            G,
            long_doc=(
                "A metric's own tolerance, replacing `tolerance` for it "
                '(e.g. `"recall@10" = 0.1`).'
            ),
        ),
    ] = Field(default_factory=dict)
    gate_rule: Annotated[
        RuleName,
        Option(
            "The rule that turns the paired per-query values into a verdict "
            "(docs/configuration.md, the gate's rules); `any-metric` is the seed's.",
            G,
            long_doc=(
                "The rule that turns the paired per-query values into a verdict ([the gate's "
                "rules](#the-gates-rules)): by default the headline metric's drop over every "
                'dataset\'s queries pooled, failing beyond half the tolerance. `"any-metric"` is '
                "the seed's rule: any gated metric drops more than the tolerance."
            ),
        ),
    ] = DEFAULT_RULE
    headline: Annotated[
        str | None,
        Option(
            "The metric a dataset is judged and named by. Not set: `ndcg@K` if measured, "
            "else the first measure.",
            G,
            long_doc=(
                "The metric a dataset is judged and named by: the headline, the badge, the "
                "resolution line; under a headline rule the only one gated. Not set: `ndcg@K` if "
                "measured, else the first measure."
            ),
        ),
    ] = None
    dataset_headlines: Annotated[
        dict[str, str],
        Option(
            "A dataset file's own headline metric.",
            G,
            long_doc='A dataset file\'s own headline metric (`"faq.jsonl" = "mrr@10"`).',
        ),
    ] = Field(default_factory=dict)
    # Opt-in noise rules (docs/configuration.md, "Small datasets and noise"). None: off.
    significance: Annotated[
        float | None,
        Option(
            "A drop beyond the tolerance fails only when its paired test's p is below.",
            G,
            long_doc=(
                "Opt-in: a drop beyond the tolerance fails only when its paired test gives p below "
                "this (`0.05`); the others show as ⚠️ within noise. See [small datasets and "
                "noise](#small-datasets-and-noise)."
            ),
        ),
    ] = Field(default=None, gt=0.0, lt=1.0)
    max_regressed_queries: Annotated[
        int | None,
        Option(
            "Fail when more shared queries than this lose every relevant hit in the top k.",
            G,
            long_doc=(
                "Opt-in: fail when more than this many queries that found a relevant document in "
                "the baseline's top k find none now, whatever the means say."
            ),
        ),
    ] = Field(default=None, ge=0)
    # A comparison over no shared query at all fails too.
    max_removed_share: Annotated[
        float,
        Option(
            "Share of a dataset's baselined queries that may be missing from one run.",
            G,
            long_doc=(
                "The share of a dataset's baselined queries that may be missing from one run "
                "(removed, or renamed: a new id is a new query). More fails the gate, and so does "
                "a comparison over no shared query at all."
            ),
        ),
    ] = Field(default=0.5, ge=0.0, le=1.0)
    # For retrievers that are not deterministic (an ANN index, an LLM reranker).
    repeats: Annotated[
        int,
        Option(
            "Search each query this many times and score the mean.",
            G,
            long_doc=(
                "Search each query this many times and score it by its mean, for retrievers that "
                "are not deterministic; the report shows the spread between repeats."
            ),
        ),
    ] = Field(default=1, ge=1, le=100)
    seed: Annotated[
        int,
        Option(
            "Seed of the bootstrap and randomization tests (their p-values).",
            G,
            long_doc=(
                "Seed of the bootstrap intervals and the randomization test (same inputs, same "
                "numbers)."
            ),
        ),
    ] = 0
    min_fixtures: Annotated[
        int,
        Option(
            "Fewest valid fixtures a dataset file may hold.",
            G,
            commands=("validate",),
            long_doc="Validation: the fixtures a dataset file must hold.",
        ),
    ] = Field(default=20, ge=0)
    min_human: Annotated[
        int,
        Option(
            "Fewest human-annotated fixtures a dataset file may hold.",
            G,
            commands=("validate",),
            long_doc="Validation: how many of a file's fixtures must be `human-annotated`.",
        ),
    ] = Field(default=10, ge=0)
    retrievers: Annotated[
        RetrieversConfig,
        Option(
            "Every retriever's settings; its resource bounds are the base commit's.",
            PR,
            long_doc=(
                "Settings of each retriever (`dense`, `bm25`, `like`, `hybrid`, `custom`, "
                "`postgres`, `chroma`, `http`, `run-file`, `qdrant`, `lancedb`, `milvus`, "
                "`langchain`, `llamaindex`)."
            ),
        ),
    ] = Field(default_factory=RetrieversConfig)
    judge: Annotated[
        JudgeSettings,
        Option(
            "The LLM judge.",
            long_doc="The optional LLM judge; see [below](#judge). Off unless `enabled`.",
        ),
    ] = Field(default_factory=JudgeSettings)
    judged: Annotated[
        JudgedSettings,
        Option(
            "The judged tier (queries the LLM judge labels).",
            long_doc=(
                "The judged tier: queries without expected ids, labelled by the LLM judge with "
                "`retrieval-eval label`; see "
                "[golden datasets](golden-datasets.md#the-judged-tier). Off unless `enabled`."
            ),
        ),
    ] = Field(default_factory=JudgedSettings)
    # Never gated, never in the baseline or the history (docs/configuration.md, "Challengers").
    challengers: Annotated[
        dict[str, ChallengerConfig],
        Option(
            "Retrievers reported beside the gated one; their bounds are the base's.",
            PR,
            long_doc=(
                "Retrievers evaluated beside the gated one, reported and never gated; see "
                "[challengers](#challengers)."
            ),
        ),
    ] = Field(default_factory=dict)
    progress: Annotated[
        ProgressSettings,
        Option(
            "When a step shows its progress.",
            long_doc="When a step shows its progress; see [below](#progress).",
        ),
    ] = Field(default_factory=ProgressSettings)
    # On top of the GitHub and Actions tokens that are always withheld.
    secret_env: Annotated[
        tuple[str, ...],
        Option(
            "Environment variables (names or globs) the retriever must not see; masked in all "
            "output.",
            Commit.UNION,
            long_doc=(
                'Environment variables (names or globs such as `"AWS_*"`) your retriever must not '
                "see, on top of those always withheld (`INPUT_GITHUB-TOKEN`, `INPUT_GITHUB_TOKEN`, "
                "`GITHUB_TOKEN`, `GH_TOKEN`, `ACTIONS_RUNTIME_TOKEN`, "
                "`ACTIONS_ID_TOKEN_REQUEST_*`). Their values are masked in everything "
                "retrieval-eval writes or posts."
            ),
        ),
    ] = ()
    # Say, a Bear database in your home folder. Anything else that resolves outside the
    # repository (a symlinked note included) is refused.
    outside_roots: Annotated[
        tuple[Path, ...],
        Option(
            "Folders outside the repository input files may come from.",
            long_doc=(
                "Folders outside the repository that corpus and dataset files may come from (e.g. "
                "a Bear database in your home folder). Any other file resolving outside the "
                "repository, a symlinked note included, is refused, as is anything that is not a "
                "regular file. Paths given on the command line (`--corpus`, `--datasets`) are "
                "allowed as they are."
            ),
        ),
    ] = ()
    time_limit_s: Annotated[
        float,
        Option(
            "Longest the whole evaluation may take; past it the run ends in an error naming "
            "the step.",
            long_doc=(
                "Longest the whole evaluation may take, in seconds (at most 19800: GitHub cancels "
                "a job after 6 hours, without a status). It bounds every command that evaluates "
                "or does a part of it, each the same way: `run` (`--shard` too), `baseline "
                "update`, `embed` and `merge`, and the Action's `evaluate`, `embed-shard`, "
                "`evaluate-shard` and `merge` modes. Past it the command stops with exit 2 and "
                "an error naming the step it was in and `time_limit_s` to raise; in the Action, "
                "with the `error` verdict (and the `error` status, in the modes that set one). "
                "The default is 6.5× the slowest run "
                "measured, a cold Cranfield `run` that embedded 2,007 texts in 556 s of wall time "
                'on a loaded 2-core machine (docs/benchmarks.md, "Time to verdict"). Every '
                "`timeout_s` a configuration sets (a retriever's, the judge's, the reranker's) is "
                "at most 3600. On a pull request both are the base commit's."
            ),
        ),
    ] = Field(default=TIME_LIMIT_S, gt=0, le=TIME_LIMIT_CAP_S)
    # The run's directory, the repository: set when the settings are loaded, not a file key.
    repository: Path | None = None

    def input_roots(self) -> tuple[Path, ...] | None:
        """Where corpus and dataset files may resolve to; None: anywhere (built in code)."""
        if self.repository is None:
            return None
        return (self.repository, *self.outside_roots)

    @field_validator("measures")
    @classmethod
    def _known_measures(cls, measures: tuple[str, ...]) -> tuple[str, ...]:
        from retrieval_eval.score.measure_names import parse_measure

        canonical = []
        for name in measures:
            try:
                canonical.append(parse_measure(name).name)
            except ConfigError as error:
                raise ValueError(error.message) from None
        if len(set(canonical)) != len(canonical):
            raise ValueError("a measure is listed twice")
        if not canonical:
            raise ValueError("list at least one measure")
        return tuple(canonical)

    @field_validator("*", mode="before")
    @classmethod
    def _no_empty_path(cls, value: object, info: ValidationInfo) -> object:
        # Path("") is ".": `history = ""` would name the repository folder itself.
        if info.field_name in PATH_FIELDS and isinstance(value, str) and not value.strip():
            raise ValueError("empty path; remove the key to use the default")
        return value

    @field_validator("dataset_retrievers")
    @classmethod
    def _known_retrievers(cls, retrievers: dict[str, str]) -> dict[str, str]:
        from retrieval_eval.retrieval.registry import RETRIEVER_NAMES

        for dataset, name in retrievers.items():
            if name not in RETRIEVER_NAMES:
                raise ValueError(
                    f"unknown retriever {name!r} for {dataset}; "
                    f"choose one of: {', '.join(RETRIEVER_NAMES)}"
                )
        return retrievers

    @field_validator("challengers", mode="before")
    @classmethod
    def _challengers_over_retrievers(cls, tables: object, info: ValidationInfo) -> object:
        """Each challenger's retriever tables laid over what the file sets in ``[retrievers]``
        (only what it sets: the defaults are filled once, by validation)."""
        if not isinstance(tables, Mapping):
            return tables
        base = info.data.get("retrievers")
        under = base.model_dump(by_alias=True, exclude_unset=True) if base is not None else {}
        return {
            name: _challenger_table(table, under) if isinstance(table, Mapping) else table
            for name, table in tables.items()
        }

    @field_validator("challengers")
    @classmethod
    def _challenger_names(
        cls, challengers: dict[str, ChallengerConfig]
    ) -> dict[str, ChallengerConfig]:
        from retrieval_eval.retrieval.registry import RETRIEVER_NAMES

        for name in challengers:
            if name in RETRIEVER_NAMES or not name.strip():
                raise ValueError(
                    f"challenger name {name!r} is taken: name it apart from the retrievers "
                    f'({", ".join(RETRIEVER_NAMES)}), e.g. "{name or "hybrid"}-rrf"'
                )
        return challengers

    @field_validator("gated")
    @classmethod
    def _gated_are_measured(
        cls, gated: tuple[str, ...] | None, info: ValidationInfo
    ) -> tuple[str, ...]:
        if gated is None:
            return (*info.data.get("measures", DEFAULT_MEASURES), GROUNDEDNESS)
        known = _measured(info)
        for name in gated:
            if name not in known:
                raise ValueError(
                    f"gated metric {name!r} is not measured; measured: {sorted(known)}"
                )
        return gated

    @field_validator("tolerances")
    @classmethod
    def _tolerances_fit(
        cls, tolerances: dict[str, float], info: ValidationInfo
    ) -> dict[str, float]:
        known = _measured(info)
        for name, value in tolerances.items():
            if name not in known:
                raise ValueError(f"tolerance for {name!r}, which is not measured: {sorted(known)}")
            if not 0.0 <= value < 1.0:
                raise ValueError(f"tolerance for {name!r} is {value}; give a share from 0 to 1")
        return tolerances

    @field_validator("headline")
    @classmethod
    def _headline_measured(cls, headline: str | None, info: ValidationInfo) -> str | None:
        measures = info.data.get("measures", DEFAULT_MEASURES)
        if headline is not None and headline not in measures:
            raise ValueError(f"headline {headline!r} is not measured; measured: {list(measures)}")
        return headline

    @field_validator("dataset_headlines")
    @classmethod
    def _dataset_headlines_measured(
        cls, headlines: dict[str, str], info: ValidationInfo
    ) -> dict[str, str]:
        measures = info.data.get("measures", DEFAULT_MEASURES)
        for dataset, metric in headlines.items():
            if metric not in measures:
                raise ValueError(
                    f"headline {metric!r} of {dataset} is not measured; measured: {list(measures)}"
                )
        return headlines

    @field_validator("thresholds")
    @classmethod
    def _thresholds_fit(
        cls, thresholds: dict[str, Threshold], info: ValidationInfo
    ) -> dict[str, Threshold]:
        _check_thresholds(thresholds, _measured(info))
        return thresholds

    @field_validator("dataset_thresholds")
    @classmethod
    def _dataset_thresholds_fit(
        cls, tables: dict[str, dict[str, Threshold | Literal[False]]], info: ValidationInfo
    ) -> dict[str, dict[str, Threshold | Literal[False]]]:
        for table in tables.values():
            _check_thresholds(
                {name: t for name, t in table.items() if t is not False}, _measured(info)
            )
        return tables

    def threshold_for(self, metric: str, dataset: str) -> Threshold | None:
        """The dataset's own threshold on ``metric`` if it has one, else the general one."""
        own = self.dataset_thresholds.get(dataset, {})
        if metric in own:
            chosen = own[metric]
            return None if chosen is False else chosen
        general = self.thresholds.get(metric)
        return general if general is not None and general.applies_to(dataset) else None

    def is_gated(self, metric: str) -> bool:
        return self.gated is not None and metric in self.gated

    def retriever_for(self, dataset_name: str) -> str | None:
        return self.dataset_retrievers.get(dataset_name)

    def judged_retriever(self) -> str:
        """The judged tier's gated retriever: the one ``[dataset_retrievers]`` names for its
        queries file (``"queries.jsonl" = "hybrid"``)."""
        return self.require_retriever(self.judged.queries)

    def judged_challengers(self) -> dict[str, ChallengerConfig]:
        """The challengers evaluated on the judged tier (those not limited to other files)."""
        name = self.judged.queries.name
        return {n: c for n, c in self.challengers.items() if c.applies_to(name)}

    def require_retriever(self, dataset: Path) -> str:
        """The retriever configured for a dataset file; naming none is a configuration error."""
        name = self.retriever_for(dataset.name)
        if name is None:
            raise ConfigError(
                f"no retriever is configured for {dataset.name}; add it under "
                f'[dataset_retrievers] (e.g. "{dataset.name}" = "hybrid")',
                file=dataset,
            )
        return name


# The settings that name a file or folder: relative to the run's directory, never empty.
PATH_FIELDS = tuple(
    name
    for name, field in RunSettings.model_fields.items()
    if (option := declared(field)) is not None and option.path is not None
)
# The same inside a declared table (`judged.judgments`): (table, key) pairs.
TABLE_PATH_FIELDS = tuple(
    (name, sub)
    for name, field in RunSettings.model_fields.items()
    if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
    for sub, sub_field in field.annotation.model_fields.items()
    if (option := declared(sub_field)) is not None and option.path is not None
)


def _check_thresholds(thresholds: Mapping[str, Threshold], known: set[str]) -> None:
    for name, threshold in thresholds.items():
        if name not in known:
            raise ValueError(f"threshold on {name!r}, which is not measured: {sorted(known)}")
        lower_is_better = name in LOWER_IS_BETTER
        if lower_is_better and threshold.max is None:
            raise ValueError(f"threshold on {name!r} needs max (lower is better)")
        if not lower_is_better and threshold.min is None:
            raise ValueError(f"threshold on {name!r} needs min (higher is better)")


def _challenger_table(table: Mapping[str, Any], under: Mapping[str, Any]) -> dict[str, Any]:
    """The file's ``[challengers.NAME]`` as ``ChallengerConfig`` reads it: its own keys, and
    its retriever tables merged over the run's under ``retrievers``. A key that is neither
    stays where it is, so it is reported as an unknown key of the challenger."""
    fields = {field.alias or name for name, field in RetrieversConfig.model_fields.items()}
    own = {key: value for key, value in table.items() if key not in fields}
    overlay = {key: value for key, value in table.items() if key in fields}
    return {**own, "retrievers": _deep_merge(under, overlay)}


def _measured(info: ValidationInfo) -> set[str]:
    measures = info.data.get("measures", DEFAULT_MEASURES)
    return {*measures, GROUNDEDNESS, JUDGE, LATENCY_P95, COST_PER_QUERY}


_MERGED_TABLES = ("thresholds", "dataset_retrievers")
# `--judge` sets only judge.enabled; the file's model and prices must survive it.
_DEEP_TABLES = ("retrievers", "judge", "judged")


def _absolute(name: str, workdir: Path, value: Path) -> Path:
    """``value`` made absolute under ``workdir``. The baseline keeps the name the configuration
    gives it (symlinks in the working tree are not followed): on a pull request it is read
    from the base commit by that name, and a symlink the pull request adds must not change
    which file that is."""
    if name == "baseline":
        return Path(os.path.normpath(workdir.resolve() / value))
    return (workdir / value).resolve()


def find_config_file(workdir: Path) -> tuple[Path, dict[str, Any]] | None:
    """``retrieval-eval.toml`` wins over ``[tool.retrieval-eval]`` in ``pyproject.toml``."""
    own = workdir / CONFIG_FILE_NAME
    if own.is_file():
        return own, _read_toml(own)
    pyproject = workdir / "pyproject.toml"
    if pyproject.is_file():
        table = _read_toml(pyproject).get("tool", {}).get("retrieval-eval")
        if isinstance(table, dict):
            return pyproject, table
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read the configuration: {error.strerror}", file=path) from error
    problem = wide_encoding_problem(data[:4])
    if problem is not None:
        raise ConfigError(problem, file=path)
    try:
        # A UTF-8 byte-order mark (Windows Notepad writes one) is not TOML, but not a mistake.
        text = data.removeprefix(UTF8_BOM).decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(
            f"not valid TOML: invalid UTF-8 at line {line}; save the file as UTF-8", file=path
        ) from None
    _check_key_depth(text, path)  # tomllib takes minutes over a header 100,000 keys deep
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"not valid TOML: {error}", file=path) from error
    except RecursionError:  # arrays or inline tables nested thousands deep
        raise ConfigError(_TOO_DEEP, file=path) from None
    _check_depth(table, path)
    return table


# No setting nests deeper than a handful of tables (`challengers.NAME.hybrid.claude`, a
# factory's `options`); a value nested deeper than this is refused before anything walks it.
MAX_DEPTH = 32
_TOO_DEEP = f"values nested more than {MAX_DEPTH} levels deep; no setting needs that"


def _check_key_depth(text: str, path: Path) -> None:
    """Refuse a table header or dotted key of more than ``MAX_DEPTH`` keys, before parsing."""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#") or ("." not in line):
            continue
        head = line.strip("[]") if line.startswith("[") else line.split("=", 1)[0]
        keys = _key_parts(head.split("]", 1)[0])
        if len(keys) > MAX_DEPTH:
            shown = ".".join(keys[:4])
            raise ConfigError(f"{_TOO_DEEP} (under '{shown}...')", file=path, line=number)


def _check_depth(table: Mapping[str, Any], path: Path) -> None:
    """Refuse a value nested deeper than ``MAX_DEPTH``, walked without recursion (the first
    few keys are kept, to say where)."""
    stack: list[tuple[object, int, tuple[str, ...]]] = [(table, 0, ())]
    while stack:
        value, depth, keys = stack.pop()
        if depth > MAX_DEPTH:
            raise ConfigError(
                f"{_TOO_DEEP} (under '{'.'.join(keys)}...')",
                file=path,
                line=toml_line(str(path), keys[:1]),
            )
        if isinstance(value, Mapping):
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        for key, inner in items:
            stack.append((inner, depth + 1, keys if len(keys) >= 4 else (*keys, str(key))))


def load_settings(
    *,
    workdir: Path,
    config_file: Path | None,
    overrides: Mapping[str, object],
    overrides_source: str = "command line",
    home: Path | None = None,
    cores: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> RunSettings:
    """``read_settings``, then the services' secrets read from ``environ`` (this process's
    environment by default). The edges go through ``prepare``, which withholds
    ``secret_env`` between the two steps."""
    settings = read_settings(
        workdir=workdir,
        config_file=config_file,
        overrides=overrides,
        overrides_source=overrides_source,
        home=home,
        cores=cores,
    )
    return resolve_environment(settings, environ=os.environ if environ is None else environ)


def resolve_environment(settings: RunSettings, *, environ: Mapping[str, str]) -> RunSettings:
    """The values of the environment variables the settings name (``dsn_env``,
    ``headers_env``); a name that is not set in ``environ`` is a configuration error."""
    from retrieval_eval.retrieval.external.services import with_service_environment

    assert settings.repository is not None, "read_settings sets the repository"
    retrievers = with_service_environment(
        settings.retrievers, workdir=settings.repository, environ=environ
    )
    challengers: dict[str, ChallengerConfig] = {}
    for name, challenger in settings.challengers.items():
        # Report-only: a variable a challenger names that is not set (or is withheld) is
        # said on its row, and never fails the run.
        try:
            resolved = with_service_environment(
                challenger.retrievers, workdir=settings.repository, environ=environ
            )
        except ConfigError as error:
            challengers[name] = challenger.with_unavailable(error.message)
            continue
        challengers[name] = challenger.model_copy(update={"retrievers": resolved})
    return settings.model_copy(update={"retrievers": retrievers, "challengers": challengers})


def read_settings(
    *,
    workdir: Path,
    config_file: Path | None,
    overrides: Mapping[str, object],
    overrides_source: str = "command line",
    home: Path | None = None,
    cores: int | None = None,
) -> RunSettings:
    """Merge the layers and validate once; a bad key or value names itself and its source.

    Nothing here reads an environment variable the settings name: what the run may see
    (``secret_env``) must be known, and withheld, before any of them is resolved.
    Relative paths are taken relative to ``workdir``. ``home`` and ``cores``
    fill the machine-dependent defaults (model folder, ONNX threads); they
    default to this machine's, which is what the command-line edges want.
    """
    if config_file is not None:
        path = config_file if config_file.is_absolute() else workdir / config_file
        if not path.is_file():
            raise ConfigError("configuration file not found", file=path)
        raw = _read_toml(path)
        if path.name == "pyproject.toml":
            raw = raw.get("tool", {}).get("retrieval-eval", {})
        found: tuple[Path, dict[str, Any]] | None = (path, raw)
    else:
        found = find_config_file(workdir)

    merged: dict[str, Any] = {}
    if found is not None:
        source, table = found
        if "repository" in table:  # a field, but the run's own folder: never a file's to move
            raise ConfigError(
                "unknown key 'repository' (the repository is the folder the run starts in)",
                file=source,
                line=toml_line(str(source), ("repository",)),
            )
        _apply_layer(merged, table, str(source))
    _apply_layer(merged, dict(overrides), overrides_source)
    _validate(merged, source_of=_sources(found, overrides, overrides_source))
    for name in (*PATH_FIELDS, "outside_roots"):  # no file system call takes one
        value = merged.get(name)
        if any("\0" in str(path) for path in (value if isinstance(value, list) else [value])):
            where = _sources(found, overrides, overrides_source).get(name, "settings")
            raise ConfigError(
                f"bad value for '{name}': a path cannot hold a NUL",
                file=where,
                line=toml_line(where, (name,)),
            )

    for name in PATH_FIELDS:
        value = merged.get(name)
        if isinstance(value, str | Path):
            merged[name] = _absolute(name, workdir, Path(value))
    merged["outside_roots"] = tuple(
        (workdir / Path(root)).resolve() for root in merged.get("outside_roots", ())
    )
    for table_name, key_name in TABLE_PATH_FIELDS:
        _resolve_table_path(
            merged, table_name, key_name, workdir, _sources(found, overrides, overrides_source)
        )
    merged["repository"] = workdir.resolve()
    for name in PATH_FIELDS:
        if name not in merged and name not in ("model_dir", "history"):
            merged[name] = _absolute(name, workdir, RunSettings.model_fields[name].default)
    if "history" not in merged:  # beside the baseline, whichever commit's baseline is gated
        merged["history"] = merged["baseline"].with_name(HISTORY_FILE)
    settings = _validate(merged, source_of=_sources(found, overrides, overrides_source))
    _check_challenger_datasets(settings, _sources(found, overrides, overrides_source))
    return _with_machine_defaults(settings, workdir=workdir, home=home, cores=cores)


def _resolve_table_path(
    merged: dict[str, Any], table: str, key: str, workdir: Path, source_of: Mapping[str, str]
) -> None:
    """A path inside a table (``judged.judgments``) made absolute under ``workdir``, its
    default too; a value that is not a path is left for validation to name."""
    given = merged.get(table, {})
    if not isinstance(given, Mapping):
        return
    inner = dict(given)
    model = RunSettings.model_fields[table].annotation
    assert isinstance(model, type) and issubclass(model, BaseModel)
    value = inner.get(key, model.model_fields[key].default)
    if isinstance(value, str) and "\0" in value:
        raise ConfigError(
            f"bad value for '{table}.{key}': a path cannot hold a NUL",
            file=source_of.get(table, "settings"),
            line=toml_line(source_of.get(table, "settings"), (table, key)),
        )
    if isinstance(value, str) and not value.strip():
        return  # validation says it is empty
    if isinstance(value, str | Path):
        inner[key] = _absolute(key, workdir, Path(value))
        merged[table] = inner


def _check_challenger_datasets(settings: RunSettings, source_of: Mapping[str, str]) -> None:
    """A challenger limited to a dataset no retriever is configured for could never run:
    the run evaluates only the datasets ``[dataset_retrievers]`` names."""
    source = source_of.get("challengers", "settings")
    for name, challenger in settings.challengers.items():
        unknown = [d for d in challenger.datasets if d not in settings.dataset_retrievers]
        if unknown:
            known = ", ".join(sorted(settings.dataset_retrievers)) or "(none)"
            raise ConfigError(
                f"challenger '{name}': unknown dataset {unknown[0]!r} in datasets; "
                f"the datasets are those [dataset_retrievers] names: {known}",
                file=source,
                line=toml_line(source, ("challengers", name, "datasets")),
            )


def _with_machine_defaults(
    settings: RunSettings, *, workdir: Path, home: Path | None, cores: int | None
) -> RunSettings:
    """The retriever tables with their run- and machine-dependent defaults filled in."""
    from retrieval_eval.retrieval.defaults import resolve_defaults

    retrievers = resolve_defaults(
        settings.retrievers,
        workdir=workdir,
        model_dir=settings.model_dir,
        cache_dir=settings.cache_dir,
        home=home if home is not None else Path.home(),
        cores=cores if cores is not None else len(os.sched_getaffinity(0)),
    )
    challengers = {
        name: challenger.model_copy(
            update={
                "retrievers": resolve_defaults(
                    challenger.retrievers,
                    workdir=workdir,
                    model_dir=settings.model_dir,
                    cache_dir=settings.cache_dir,
                    home=home if home is not None else Path.home(),
                    cores=cores if cores is not None else len(os.sched_getaffinity(0)),
                )
            }
        )
        for name, challenger in settings.challengers.items()
    }
    return settings.model_copy(
        update={
            "retrievers": retrievers,
            "model_dir": retrievers.dense.model_dir,
            "challengers": challengers,
        }
    )


def _apply_layer(merged: dict[str, Any], layer: Mapping[str, Any], source: str) -> None:
    """Tables of named entries merge key by key; ``false`` removes a default entry."""
    for key, value in layer.items():
        if key in _MERGED_TABLES and isinstance(value, Mapping):
            base = dict(merged.get(key, _default_table(key)))
            for entry, entry_value in value.items():
                if entry_value is False:
                    base.pop(entry, None)
                else:
                    base[entry] = entry_value
            merged[key] = base
        elif key in _DEEP_TABLES and isinstance(value, Mapping) and key in merged:
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value


def _deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    result = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = _deep_merge(result[key], value)
        else:
            result[key] = value
    return result


def _default_table(key: str) -> dict[str, Any]:
    if key == "thresholds":
        return {name: t.model_dump(exclude_defaults=True) for name, t in DEFAULT_THRESHOLDS.items()}
    return dict(DEFAULT_DATASET_RETRIEVERS)


def _sources(
    found: tuple[Path, dict[str, Any]] | None,
    overrides: Mapping[str, object],
    overrides_source: str,
) -> dict[str, str]:
    sources: dict[str, str] = {}
    if found is not None:
        sources.update(dict.fromkeys(found[1], str(found[0])))
    sources.update(dict.fromkeys(overrides, overrides_source))
    return sources


def validated_overrides(
    overrides: Mapping[str, object], source: str = "command line"
) -> RunSettings:
    """The settings ``overrides`` give over the defaults, with no configuration file and no
    paths made absolute: for a command that reads no repository (`beir` without --config)."""
    return _validate(overrides, source_of=dict.fromkeys(overrides, source))


def _validate(merged: Mapping[str, Any], *, source_of: Mapping[str, str]) -> RunSettings:
    """Every problem, one per line, each as `SOURCE: message`: a user fixing a file sees
    all of it at once."""
    try:
        return RunSettings.model_validate(merged)
    except ValidationError as error:
        found: list[tuple[str, str, str, str]] = []  # (source, key, anchor, message)
        lines_of: dict[str, int | None] = {}  # key -> its line in the file that set it
        for problem in error.errors():
            location = problem["loc"]
            key = _key_path(location, merged) or "(settings)"
            top = str(location[0]) if location else ""
            source = source_of.get(top, "settings")
            if problem["type"] == "extra_forbidden":
                message = f"unknown key '{key}'"
                guess = _closest_key(location)
                if guess is not None:
                    message += f"; did you mean '{guess}'?"
                elif top == "challengers" and len(location) == 3:
                    message += (
                        "; a retriever's settings go in its own table, e.g. "
                        f"[challengers.{_key_path(location[1:2], merged.get('challengers'))}"
                        ".hybrid]"
                    )
            else:
                message = f"bad value for '{key}': {_plain(problem['msg'])}"
            # A union member's own step (`literal[False]`) names no key of the file.
            tagged = bool(location) and "[" in str(location[-1])
            anchor = _key_path(location[:-1], merged) if tagged else key
            lines_of[key] = toml_line(source, _file_steps(_data_steps(location, merged), merged))
            found.append((source, key, anchor, message))
        # A value a union rejects is reported once per member: keep the deepest, which says
        # what is wrong inside the table (`{ mn = 0.5 }`), not that it is not `false` either.
        lines: list[tuple[str, str, int | None]] = []
        for source, key, anchor, message in found:
            deeper = any(o != key and o.startswith(anchor + ".") for _, o, _, _ in found)
            line = lines_of.get(key)
            if not deeper and (source, message, line) not in lines:
                lines.append((source, message, line))
        # The first line's source is the error's file; each further line names its own.
        first_source, first_message, first_line = lines[0]
        rest = [
            f"{shown_path(source)}{'' if line is None else f':{line}'}: {message}"
            for source, message, line in lines[1:]
        ]
        raise ConfigError(
            "\n".join([first_message, *rest]), file=first_source, line=first_line
        ) from None


def _file_steps(location: tuple[int | str, ...], merged: Mapping[str, Any]) -> tuple[str, ...]:
    """A challenger's error location as the file's keys: the ``retrievers`` step the
    challenger's tables are validated under is not in the file."""
    steps = tuple(str(part) for part in location)
    if len(steps) > 2 and steps[0] == "challengers" and steps[2] == "retrievers":
        return steps[:2] + steps[3:]
    return steps


_TABLE_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
_KEY_PART = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)')


def _key_parts(text: str) -> tuple[str, ...]:
    return tuple(a or b or c for a, b, c in _KEY_PART.findall(text))


def toml_line(source: str, keys: Sequence[str]) -> int | None:
    """The 1-based line of the configuration file ``source`` that sets ``keys`` (a table's
    header, or a key inside one), the deepest it can find; None when it names no file or
    the file does not spell the keys out (an inline table gives the line that holds it)."""
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    prefix: tuple[str, ...] = ("tool", "retrieval-eval") if path.name == "pyproject.toml" else ()
    wanted = (*prefix, *keys)
    best: tuple[int, int] | None = None  # (keys matched, line)
    table: tuple[str, ...] = ()
    for number, raw in enumerate(text.splitlines(), 1):
        header = _TABLE_HEADER.match(raw)
        if header is not None and not raw.lstrip().startswith("[["):
            table = _key_parts(header.group(1))
            parts = table
        elif "=" in raw and not raw.lstrip().startswith("#"):
            parts = (*table, *_key_parts(raw.split("=", 1)[0]))
        else:
            continue
        if parts and wanted[: len(parts)] == parts and (best is None or len(parts) > best[0]):
            best = (len(parts), number)
    return None if best is None else best[1]


def _closest_key(location: tuple[int | str, ...]) -> str | None:
    """The known key nearest the mistyped last step of ``location``, if one is close."""
    if not location:
        return None
    keys = _known_keys(location[:-1])
    matches = difflib.get_close_matches(str(location[-1]), keys, n=1, cutoff=0.6)
    return matches[0] if matches else None


def _known_keys(location: tuple[int | str, ...]) -> list[str]:
    """The keys the settings model accepts at ``location`` (pydantic's steps for unions
    and validators, which name no model field, are stepped over)."""
    types: list[Any] = [RunSettings]
    for part in location:
        stepped: list[Any] = []
        for candidate in _flatten(types):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                field = candidate.model_fields.get(str(part)) or next(
                    (f for f in candidate.model_fields.values() if f.alias == str(part)), None
                )
                if field is not None:
                    stepped.append(field.annotation)
            elif get_origin(candidate) in (dict, Mapping) and get_args(candidate):
                stepped.append(get_args(candidate)[-1])
            elif get_origin(candidate) in (list, tuple) and get_args(candidate):
                stepped.append(get_args(candidate)[0])
        if stepped:
            types = stepped
    keys: list[str] = []
    for candidate in _flatten(types):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            for name, field in candidate.model_fields.items():
                keys.append(field.alias or name)
    return keys


def _flatten(types: list[Any]) -> list[Any]:
    flat: list[Any] = []
    for candidate in types:
        if get_origin(candidate) in (Union, UnionType, Annotated):
            flat.extend(_flatten(list(get_args(candidate))))
        else:
            flat.append(candidate)
    return flat


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _data_steps(location: tuple[int | str, ...], data: object) -> tuple[int | str, ...]:
    """Pydantic's location less the steps it adds for unions and validators
    (``function-after[...]``, ``float``), which name no key of the input. The last step is
    kept even when the input lacks it: it is the missing field's name."""
    steps: list[int | str] = []
    current = data
    for position, part in enumerate(location):
        found = (isinstance(current, Mapping) and part in current) or (
            isinstance(current, list | tuple) and isinstance(part, int) and part < len(current)
        )
        if not found and position < len(location) - 1:
            continue
        current = current[part] if found else None  # type: ignore[index]
        steps.append(part)
    return tuple(steps)


def _key_path(location: tuple[int | str, ...], data: object) -> str:
    """The key as the TOML file spells it (``_data_steps``), with keys that are not bare
    TOML keys quoted (``dataset_thresholds."a.jsonl"``)."""
    parts = [
        str(part) if isinstance(part, int) or _BARE_KEY.match(str(part)) else f'"{part}"'
        for part in _data_steps(location, data)
    ]
    return ".".join(parts)


def _plain(message: str) -> str:
    return message.removeprefix("Value error, ")
