"""Labelling the judged tier (`retrieval-eval label`): the LLM judge labels its pool.

For every query of ``[judged] queries``, the top ``pool_depth`` documents of the tier's
gated retriever and of each challenger that applies to it are pooled (TREC's pooling); every
pooled pair without a current judgment (never judged, or judged with another model, prompt
or document text) is judged through the reply cache, within ``[judge] max_cost_usd``, and
the judgments file is rewritten atomically with what was judged. When the budget runs out,
what was judged is written and the rest is left for the next run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from retrieval_eval.compare.dense_model import retrievers_for
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.judgments import (
    JudgedQuery,
    Judgments,
    read_judged_queries,
    read_judgments,
    write_judgments,
)
from retrieval_eval.progress import Log
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.retrieval.search import RetrieverPool
from retrieval_eval.retrieval.timed import QuerySpec, run_queries
from retrieval_eval.score.judge import build_client
from retrieval_eval.score.pair_judging import (
    PairJudging,
    PairPlan,
    judge_pairs,
    label_judge,
    plan_pairs,
    pool,
)
from retrieval_eval.settings import RunSettings
from retrieval_eval.usecases.time_bound import bounded


@dataclass(frozen=True)
class Ranker:
    """One retriever whose top documents join the pool."""

    label: str  # the gated retriever's name, or the challenger's
    retriever: str
    config: RetrieversConfig | None  # None: the run's [retrievers]
    challenger: bool = False


def rankers(settings: RunSettings, retrievers: RetrieversConfig, log: Log) -> tuple[Ranker, ...]:
    """The tier's gated retriever, then each challenger that applies to it and can run (one
    that cannot, a variable its service names being unset, is said and left out)."""
    gated = settings.judged_retriever()
    found = [Ranker(gated, gated, retrievers)]
    for name, challenger in settings.judged_challengers().items():
        if challenger.unavailable is None:
            found.append(Ranker(name, challenger.retriever, challenger.retrievers, True))
        else:
            log(f"warning: challenger {name} is not pooled: {challenger.unavailable}")
    return tuple(found)


def pooled_rankings(
    pool_of: RetrieverPool,
    chosen: Sequence[Ranker],
    queries: Sequence[JudgedQuery],
    depth: int,
    log: Log,
) -> dict[str, dict[str, list[str]]]:
    """Each ranker's top ``depth`` document ids for every query: ranker → query → ids."""
    specs = [QuerySpec(q.query_id, q.query) for q in queries]
    rankings: dict[str, dict[str, list[str]]] = {}
    for ranker in chosen:
        try:
            retriever, _ = pool_of.get(ranker.retriever, ranker.config)
            rankings[ranker.label] = {
                timed.query_id: [hit.doc_id for hit in timed.result.hits]
                for timed in run_queries(retriever, specs, depth)
            }
        except Exception as error:
            if not ranker.challenger:
                raise
            # As in a run, a challenger that fails never stops the command: it is said, and
            # its documents are not pooled.
            problem = error.message if isinstance(error, RetrievalEvalError) else str(error)
            problem = problem or type(error).__name__
            log(f"warning: challenger {ranker.label} is not pooled: {problem}")
    return rankings


@dataclass(frozen=True)
class LabelOutcome:
    queries: int
    rankers: tuple[str, ...]
    plan: PairPlan
    judging: PairJudging
    new_judged: int  # of the pairs judged, how many had no judgment before
    written: Judgments
    path: Path


@bounded
def label_tier(
    settings: RunSettings,
    corpus: Corpus,
    *,
    api_key: SecretStr | None,
    log: Log,
    interactive: bool = False,
) -> LabelOutcome:
    """Pool, judge what needs it, write the judgments file. A failed call (after the
    client's retries) still writes what was judged before it, then raises."""
    queries = read_judged_queries(settings.judged.queries)
    existing = read_judgments(settings.judged.judgments)
    key = api_key.get_secret_value() if api_key is not None else None
    chosen = rankers(settings, retrievers_for(settings, corpus), log)
    with RetrieverPool(
        settings.retrievers,
        corpus,
        interactive=interactive,
        log=log,
        cache_dir=settings.cache_dir,
        anthropic_api_key=key,
        pace=settings.progress.pace(),
    ) as retrievers:
        rankings = pooled_rankings(retrievers, chosen, queries, settings.judged.pool_depth, log)
    pooled = pool(queries, rankings.values(), settings.judged.pool_depth)
    documents = {doc.id: doc for doc in corpus.documents}
    plan = plan_pairs(pooled, documents, existing, model=settings.judge.model)
    judge = label_judge(
        build_client(
            api_key=key,
            base_url=settings.judge.base_url,
            max_retries=settings.judge.max_retries,
            timeout_s=settings.judge.timeout_s,
        )
        if key
        else None,
        model=settings.judge.model,
        pricing=settings.judge.pricing(),
        max_cost_usd=settings.judge.max_cost_usd,
        cache_dir=settings.cache_dir,
    )
    judging = judge_pairs(plan.to_judge, judge)
    written = existing.merged(judging.judgments.values())
    if judging.judgments or not settings.judged.judgments.exists():
        write_judgments(settings.judged.judgments, written)
    return LabelOutcome(
        queries=len(queries),
        rankers=tuple(rankings),
        plan=plan,
        judging=judging,
        new_judged=sum(1 for pair in judging.judgments if pair not in existing),
        written=written,
        path=settings.judged.judgments,
    )


def summary(outcome: LabelOutcome, *, max_cost_usd: float, shown: Callable[[Path], str]) -> str:
    """What `label` prints: the pool, what was judged, what it cost."""
    plan, judging = outcome.plan, outcome.judging
    pooled = plan.new + plan.stale + plan.current
    judged = len(judging.judgments)
    grades = Counter(j.grade for j in judging.judgments.values())
    lines = [
        f"pooled {pooled:,} (query, document) pairs: top {_rankers(outcome.rankers)} for "
        f"{outcome.queries:,} queries",
        f"already current: {plan.current:,}; to judge: {plan.new:,} new, "
        f"{plan.stale:,} stale (another model, prompt or document text)",
        f"judged {judged:,} pairs ({outcome.new_judged:,} new, "
        f"{judged - outcome.new_judged:,} stale re-judged; {judging.cached:,} answered by "
        f"the reply cache); grades: "
        + ", ".join(f"{grade}: {grades.get(grade, 0):,}" for grade in (0, 1, 2)),
        f"cost: {judging.input_tokens:,} input + {judging.output_tokens:,} output tokens in "
        f"{judging.calls:,} calls, ${judging.cost_usd:.4f} (budget ${max_cost_usd:g})",
        f"wrote {shown(outcome.path)} ({len(outcome.written):,} judgments)",
    ]
    if plan.missing:
        lines.append(
            f"not judged: {len(plan.missing):,} pooled ids the corpus does not hold "
            f"(first: {plan.missing[0]!r})"
        )
    left = len(plan.to_judge) - judged
    if judging.budget_reached:
        lines.append(
            f"budget reached: {left:,} pairs left unjudged; {judging.stopped}. Run `label` "
            "again with a higher [judge] max_cost_usd (or --max-cost-usd) to judge the rest."
        )
    return "\n".join(lines)


def _rankers(names: Sequence[str]) -> str:
    return " and ".join(names)
