"""One evaluation, stage by stage: load → validate → index → retrieval → score → compare
→ render, and the baseline written when due.

Only the order of the stages lives here; each step is a function in its own module, and
what a user does (one evaluation, a shard, the merge of shards) is composed from these in
``retrieval_eval.usecases``. The settings, the datasets and the baseline are checked
before the slow part starts; the history (it only draws the report's sparklines) is read
after it, when the report is assembled. Nothing is written until every dataset has been
evaluated and the history read, so an error never leaves half the files updated.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import SecretStr

from retrieval_eval import deadline
from retrieval_eval.compare.baseline import (
    Baseline,
    load_baseline,
    recorded_models,
    removed_datasets,
    updated_baseline,
    with_new_measures,
    write_baseline,
)
from retrieval_eval.compare.calibration_floor import HumanDataset
from retrieval_eval.compare.challengers import Scores, Side, compare_challengers
from retrieval_eval.compare.dense_model import choose_run_model
from retrieval_eval.compare.environment import collect_environment
from retrieval_eval.compare.gate import (
    gate_dataset,
    pooled_datasets,
    pooled_headline,
    recorded_value,
)
from retrieval_eval.compare.history import Trend, read_trend
from retrieval_eval.compare.judge_column import carry_over, judge_report, with_fingerprints
from retrieval_eval.compare.judged_tier import (
    JUDGED_TIER_ENTRY,
    SearchedTier,
    gating_datasets,
    score_tier,
    search_tier,
    tier_judge,
    tier_recorded,
    with_tier,
)
from retrieval_eval.compare.label_judging import calibrate, judge_holes
from retrieval_eval.compare.policy import gate_policy
from retrieval_eval.compare.rules import Pooled
from retrieval_eval.compare.verdict import decide
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.fixtures import LocatedFixture
from retrieval_eval.load.judgments import read_judgments
from retrieval_eval.progress import Log
from retrieval_eval.render.links import ReportLinks
from retrieval_eval.render.report_files import write_report_files
from retrieval_eval.results import DatasetChallengers, DatasetReport, JudgedTier, RunReport
from retrieval_eval.retrieval.search import RetrieverPool, SearchedDataset, search_dataset
from retrieval_eval.score import pair_judging
from retrieval_eval.score.judge import ClaudeJudge
from retrieval_eval.score.label_judge import LabelJudge
from retrieval_eval.score.measurements import (
    measure_dataset,
)
from retrieval_eval.settings import RunSettings
from retrieval_eval.sharding import Shard
from retrieval_eval.validate import Problem, ValidationReport, validate_datasets
from retrieval_eval.vocabulary import (
    EXIT_CODE,
    LOWER_IS_BETTER,
    ExitCode,
    Verdict,
    fit_status_description,
)


@dataclass(frozen=True)
class RunOutcome:
    verdict: Verdict
    exit_code: ExitCode
    report: RunReport | None
    status_description: str
    problems: Sequence[Problem] = ()
    report_json: Path | None = None
    report_markdown: Path | None = None
    markdown: str | None = None  # report.md's text
    report_html: Path | None = None
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    error: RetrievalEvalError | None = None
    baseline_written: bool = False
    warnings: tuple[str, ...] = ()  # worth a reader's attention, but no verdict's business


def error_outcome(error: RetrievalEvalError) -> RunOutcome:
    return RunOutcome(
        verdict="error",
        exit_code=ExitCode.ERROR,
        report=None,
        status_description=fit_status_description(f"error: {error}"),
        error=error,
    )


def invalid_outcome(problems: Sequence[Problem]) -> RunOutcome:
    first = problems[0]
    return RunOutcome(
        verdict="invalid",
        exit_code=ExitCode.FAILED,
        report=None,
        status_description=fit_status_description(
            f"invalid datasets: {len(problems)} problem(s); first: "
            f"{first.file.name}:{first.line}: {first.message}"
        ),
        problems=tuple(problems),
    )


def run(
    settings: RunSettings,
    *,
    interactive: bool,
    notices: Sequence[str],
    write: bool,
    rewrite: bool,
    log: Log,
    judge: ClaudeJudge | None,
    rerank_key: str | None,
    links: ReportLinks | None,
    stale: str | None = None,
    api_key: SecretStr | None = None,
) -> RunOutcome:
    """Evaluate every dataset, gate it, write the report (and the baseline when due).

    ``rewrite`` ignores the old baseline (even a corrupt one) and replaces every dataset's
    entry. ``judge`` scores each query's retrieved text, and labels what the datasets left
    unjudged; ``rerank_key`` is the hybrid's Claude reranker's key. ``links``: the run and
    the fixtures on GitHub (the Action's); ``stale``: the baseline is behind the default
    branch, said in a passing headline; ``api_key``: the judged tier's judge (none: the
    tier is reported, not gated). Raises ``RetrievalEvalError``; invalid datasets are an
    ``invalid`` outcome."""
    started = time.perf_counter()
    corpus, validation = load_and_validate(settings)
    if validation.problems:
        return invalid_outcome(validation.problems)
    previous = None if rewrite else load_baseline(settings.baseline, gated=gated_metrics(settings))
    settings, dense_model = choose_run_model(settings, corpus, recorded_models(previous), log)
    searched = search_and_measure(
        settings, corpus, validation, interactive=interactive, log=log, rerank_key=rerank_key
    )
    labeller = None if judge is None else label_judge(judge, settings)
    policy = gate_policy(settings)
    documents = {doc.id: doc for doc in corpus.documents}
    datasets: list[DatasetReport] = []
    for one in searched.datasets:
        measured = one.measured
        passages = one.searched.passages()
        # The judge runs here, before anything is written: a JudgeError leaves no files.
        if judge is not None:
            measured = judge_report(measured, passages, judge, log)
        else:
            recorded = previous.datasets.get(one.path.name) if previous else None
            measured = carry_over(with_fingerprints(measured, passages), recorded)
        entry = previous.established(one.path.name) if previous else None
        gated = gate_dataset(measured, entry, settings, policy)
        if labeller is not None:  # informational: the verdict is already decided above
            gated = judge_holes(gated, documents, labeller, log)
            gated = calibrate(
                gated,
                one.fixtures,
                documents,
                labeller,
                size=settings.judge.calibration_sample,
                seed=settings.seed,
                log=log,
            )
        datasets.append(gated)
    pooled = pooled_headline(datasets, previous, policy)
    tier = None
    if searched.tier is not None:
        # Beside the datasets, never mixed into them: it joins the verdict only while gating.
        tier = score_tier(
            searched.tier,
            settings=settings,
            policy=policy,
            documents=documents,
            human=[
                HumanDataset(one.fixtures, gated)
                for one, gated in zip(searched.datasets, datasets, strict=True)
            ],
            judge=labeller or tier_judge(settings, api_key),
            previous=previous,
            corpus_fingerprint=searched.corpus_fingerprint,
            write=write,
            log=log,
        )
    if labeller is not None and labeller.calls:
        log(f"judged {labeller.calls} label(s) with {labeller.model} (${labeller.spent_usd:.4f})")
    challengers = tuple(
        against_gated(settings, one.measured, one.challengers)
        for one in searched.datasets
        if one.challengers
    )
    return conclude(
        settings,
        datasets,
        previous=previous,
        pooled=pooled,
        model_sha256=searched.model_sha256,
        dense_model=dense_model,
        started=started,
        notices=notices,
        write=write,
        rewrite=rewrite,
        log=log,
        challengers=challengers,
        links=links,
        stale=stale,
        tier=tier,
    )


@dataclass(frozen=True)
class MeasuredDataset:
    path: Path
    fixtures: Sequence[LocatedFixture]  # the dataset's fixtures, a shard's own alone
    mine: Sequence[LocatedFixture]  # the ones searched: all of them, or a shard's
    searched: SearchedDataset
    measured: DatasetReport
    index_embedding_counts: tuple[int, int] = (0, 0)  # a shard's, counted apart
    challengers: tuple[Side, ...] = ()  # the `[challengers]` that apply to this dataset


@dataclass(frozen=True)
class SearchedRun:
    datasets: tuple[MeasuredDataset, ...]
    model_sha256: str | None
    tier: SearchedTier | None = None  # the judged tier's queries, when `[judged] enabled`
    corpus_fingerprint: str = ""


def search_and_measure(
    settings: RunSettings,
    corpus: Corpus,
    validation: ValidationReport,
    *,
    interactive: bool,
    log: Log,
    rerank_key: str | None,
    shard: Shard | None = None,
) -> SearchedRun:
    """The index, retrieval and score stages over every dataset, once for the run and the
    shard run alike: each retriever indexes the corpus once, each dataset's queries (a
    shard's: only its own) are searched and measured."""
    measured: list[MeasuredDataset] = []
    tier_wanted = settings.judged.enabled and shard is None
    # Read before any retriever runs: one can write the workspace (see SearchedTier).
    recorded = read_judgments(settings.judged.judgments) if tier_wanted else None
    with RetrieverPool(
        settings.retrievers,
        corpus,
        interactive=interactive,
        log=log,
        cache_dir=settings.cache_dir,
        anthropic_api_key=rerank_key,
        pace=settings.progress.pace(),
    ) as pool:
        for path, fixtures in sorted(validation.datasets.items()):
            name = settings.require_retriever(path)
            # A shard's validation kept its own fixtures alone (validate_datasets).
            mine = fixtures
            counts = (0, 0)
            if shard is not None:
                # Indexed first, on its own: its embedding counts are the same in every shard
                # and must be counted once, while the queries' counts add up across shards.
                before = pool.embedding_counts()
                pool.get(name)
                counts = _difference(pool.embedding_counts(), before)
            searched = search_dataset(
                path,
                mine,
                pool,
                name=name,
                k=settings.k,
                interactive=interactive,
                log=log,
                repeats=settings.repeats,
                pace=settings.progress.pace(),
            )
            report = measure_dataset(
                path=path,
                fixtures=mine,
                searched=searched,
                corpus_fingerprint=pool.corpus_fingerprint,
                measures=settings.measures,
                seed=settings.seed,
                k=settings.k,
            )
            if report.groundedness_left_out is not None:
                log(
                    f"warning: {path.name}: groundedness is left out of the gate: "
                    f"{report.groundedness_left_out}"
                )
            measured.append(MeasuredDataset(path, fixtures, mine, searched, report, counts))
        model_sha256 = pool.model_sha256
        # After every gated search, so none of them waits on a challenger; a shard's
        # challengers search its own queries, and the merge compares them over all.
        measured = [
            replace(one, challengers=_challenge(settings, one, pool, interactive, log))
            for one in measured
        ]
        tier = None
        if recorded is not None:
            tier = search_tier(settings, pool, recorded=recorded, interactive=interactive, log=log)
        return SearchedRun(tuple(measured), model_sha256, tier, pool.corpus_fingerprint)


def against_gated(
    settings: RunSettings, measured: DatasetReport, sides: Sequence[Side]
) -> DatasetChallengers:
    """The challengers of one dataset compared with its gated retriever's measurements."""
    return compare_challengers(
        measured.name,
        Scores.of(measured),
        sides,
        measures=settings.measures,
        seed=settings.seed,
    )


def _challenge(
    settings: RunSettings, one: MeasuredDataset, pool: RetrieverPool, interactive: bool, log: Log
) -> tuple[Side, ...]:
    """Each challenger that applies to the dataset, searched and measured on its fixtures
    from the run's pool and caches. A challenger that fails is a warning on its row: it is
    only reported, so it can never fail the run."""
    sides = []
    for name, challenger in settings.challengers.items():
        if not challenger.applies_to(one.path.name):
            continue
        problem = challenger.unavailable
        measured = None
        if problem is None:
            try:
                searched = search_dataset(
                    one.path,
                    one.mine,
                    pool,
                    name=challenger.retriever,
                    k=settings.k,
                    interactive=interactive,
                    log=log,
                    repeats=settings.repeats,
                    config=challenger.retrievers,
                    label=name,
                )
                measured = measure_dataset(
                    path=one.path,
                    fixtures=one.mine,
                    searched=searched,
                    corpus_fingerprint=pool.corpus_fingerprint,
                    measures=settings.measures,
                    seed=settings.seed,
                    k=settings.k,
                )
            except Exception as error:  # reported on its row, never raised
                problem = error.message if isinstance(error, RetrievalEvalError) else str(error)
                problem = problem or type(error).__name__
        if problem is not None:
            log(f"warning: challenger {name} on {one.path.name}: {problem}")
        scores = None if measured is None else Scores.of(measured)
        sides.append(Side(name, challenger.retriever, scores, problem))
    return tuple(sides)


# Named for a time bound that passes here, after the last progress step.
@deadline.step("deciding the verdict and writing the report")
def conclude(
    settings: RunSettings,
    datasets: Sequence[DatasetReport],
    *,
    previous: Baseline | None,
    pooled: Pooled | None = None,
    model_sha256: str | None,
    dense_model: str | None = None,
    started: float,
    notices: Sequence[str],
    write: bool,
    rewrite: bool,
    log: Log,
    challengers: tuple[DatasetChallengers, ...] = (),
    links: ReportLinks | None = None,
    stale: str | None = None,
    tier: JudgedTier | None = None,
) -> RunOutcome:
    """Decide the verdict over the gated datasets, write the baseline when due and the report.

    ``challengers`` are only reported: nothing here that decides or writes the verdict,
    the baseline or the history reads them. ``tier`` (the judged tier) joins the verdict
    only while it gates; the baseline records its values either way."""
    environment = collect_environment(
        repository=settings.datasets, model_sha256=model_sha256, dense_model=dense_model
    )
    removed = removed_datasets(previous, evaluated={d.name for d in datasets})
    policy = gate_policy(settings)
    datasets = pooled_datasets(datasets, pooled, policy)
    decision = decide(
        gating_datasets(datasets, tier),
        policy=policy,
        removed=removed,
        pooled=pooled,
        stale=stale,
    )
    established = [d.name for d in datasets if d.baseline_established]
    # A measure an established entry never recorded is established by this run too.
    extended = None if rewrite or previous is None else with_new_measures(previous, datasets)
    tier_due = tier_recorded(tier, previous, rewrite=rewrite)
    baseline_written = write and (bool(established) or extended is not None or tier_due)
    if baseline_written:
        new = updated_baseline(
            None if rewrite else (previous if extended is None else extended[0]),
            datasets,
            environment=environment,
            k=settings.k,
            only=None if rewrite else established,
        )
        if tier is not None and tier_due:
            new = with_tier(new, tier, k=settings.k)
            established.append(JUDGED_TIER_ENTRY)
        if extended is not None:
            established += [name for name in extended[1] if name not in established]
    # The edges read within the input roots (prepare.py): a history linked elsewhere is refused.
    trend = read_trend(settings.history) if settings.history is not None else Trend()
    if trend.warning is not None:
        log(f"warning: {trend.warning}")

    report = RunReport(
        verdict=decision.verdict,
        headline=decision.headline,
        status_description=decision.status_description,
        tolerance=policy.tolerance,
        measures=settings.measures,
        k=settings.k,
        baseline_path=settings.baseline.name,
        baseline_written=baseline_written,
        datasets=tuple(datasets),
        removed_datasets=removed,
        environment=environment,
        baseline_environment=None if previous is None else previous.environment,
        duration_s=time.perf_counter() - started,
        history=trend.values,
        challengers=challengers,
        policy=policy,
        judged_tier=tier,
    )
    files = write_report_files(report, settings.report_dir, notices=notices, links=links)
    # The baseline last: a report that cannot be written (a full disk) leaves it untouched.
    if baseline_written:
        write_baseline(settings.baseline, new)
        log(f"wrote {settings.baseline.name} ({', '.join(established)})")
    return RunOutcome(
        verdict=decision.verdict,
        exit_code=EXIT_CODE[decision.verdict],
        report=report,
        status_description=decision.status_description,
        report_json=files.json_path,
        report_markdown=files.markdown_path,
        markdown=files.markdown,
        report_html=files.html_path,
        metrics=compact_metrics(datasets),
        baseline_written=baseline_written,
        warnings=(
            *(() if trend.warning is None else (trend.warning,)),
            *(
                f"challenger {c.name} on {one.dataset}: {c.warning}"
                for one in challengers
                for c in one.challengers
                if c.warning is not None
            ),
        ),
    )


def label_judge(judge: ClaudeJudge, settings: RunSettings) -> LabelJudge:
    """The judge's label calls (holes, calibration, the judged tier): cached by what was
    judged, within ``max_cost_usd``; the one reply cache `label` asks through too."""
    return pair_judging.label_judge(
        judge.client,
        model=judge.model,
        pricing=settings.judge.pricing(),
        max_cost_usd=settings.judge.max_cost_usd,
        cache_dir=settings.cache_dir,
    )


def compact_metrics(datasets: Sequence[DatasetReport]) -> dict[str, dict[str, float]]:
    """dataset → metric → current value: the Action's ``metrics`` output."""
    return {d.name: {row.metric: recorded_value(d, row.metric) for row in d.rows} for d in datasets}


def gated_metrics(settings: RunSettings) -> list[str]:
    """The metrics the gate compares, which is what the baseline is checked for."""
    return [m for m in (*settings.measures, *LOWER_IS_BETTER) if settings.is_gated(m)]


def _difference(after: tuple[int, int] | None, before: tuple[int, int] | None) -> tuple[int, int]:
    if after is None:
        return (0, 0)
    start = before or (0, 0)
    return (after[0] - start[0], after[1] - start[1])


def load_and_validate(
    settings: RunSettings, shard: Shard | None = None
) -> tuple[Corpus, ValidationReport]:
    """The load and validate stages: the corpus, and the datasets checked against it (a
    shard's: its own fixtures; the other shards' lines are only counted)."""
    corpus = load_corpus(settings.corpus)
    validation = validate_datasets(
        [settings.datasets],
        corpus=corpus,
        min_fixtures=settings.min_fixtures,
        min_human=settings.min_human,
        shard=shard,
    )
    return corpus, validation
