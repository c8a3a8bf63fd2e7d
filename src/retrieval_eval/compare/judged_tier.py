"""The judged tier in a run: its queries searched by the gated retriever, the documents new
in their top k judged on the fly, scored with trec_eval's conventions, compared with the
baseline's tier, and let into the verdict only while the judge is calibrated.

Scoring follows trec_eval: the qrels are the current judgments (same judge model, prompt
and document text), a document nobody judged counts as not relevant, and a query with no
relevant judged document scores 0 and is averaged in. ``judged@k`` says how much of the
top k the judgments cover, so a reader can tell how much "not relevant" is only "unjudged".

On the fly, each (query, document) pair in the top k without a current judgment is put to
the judge (the base commit's key, model, prompt and budget: ``[judge]`` and ``[judged]``
are base-commit settings), so a retriever that finds documents nobody judged yet is not
scored down for it. The new judgments are written to the judgments file only by a run that
may write (never on a pull request: `retrieval-eval label` on the branch records them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from retrieval_eval.compare.baseline import Baseline, BaselineDataset, baseline_entry
from retrieval_eval.compare.calibration_floor import (
    HumanDataset,
    not_gating,
    recorded_agreement,
    tier_agreement,
)
from retrieval_eval.compare.gate import gate_dataset
from retrieval_eval.load.documents import Document
from retrieval_eval.load.fixtures import Fixture, LocatedFixture
from retrieval_eval.load.judgments import (
    JudgedQuery,
    Judgments,
    read_judged_queries,
    text_sha256,
    write_judgments,
)
from retrieval_eval.progress import Log
from retrieval_eval.results import DatasetReport, GatePolicy, JudgedTier
from retrieval_eval.retrieval.search import RetrieverPool, SearchedDataset, search_dataset
from retrieval_eval.score import pair_judging
from retrieval_eval.score.judge import build_client
from retrieval_eval.score.label_judge import LABEL_PROMPT_SHA256, LabelJudge
from retrieval_eval.score.measurements import measure_dataset
from retrieval_eval.settings import RunSettings
from retrieval_eval.vocabulary import ROW_STATUS

# The name the run's log gives the tier's baseline entry when it writes it.
JUDGED_TIER_ENTRY = "the judged tier"


@dataclass(frozen=True)
class SearchedTier:
    path: Path
    queries: tuple[JudgedQuery, ...]
    searched: SearchedDataset
    # The judgments file as it was before any retriever ran: a retriever runs in the
    # workspace, and what it wrote there must not be merged into what the run writes.
    recorded: Judgments


def _fixture(query: JudgedQuery, relevant: Mapping[str, int], path: Path, line: int) -> Fixture:
    """A fixture built from trusted parts (the tier's file was read and checked, the grades
    are the judgments'), so its checks are not run again: a query nobody judged relevant has
    no expected id, which a golden-set fixture may not, and scores 0 (trec_eval)."""
    ranked = sorted(relevant, key=lambda doc_id: (-relevant[doc_id], doc_id))
    return Fixture.model_construct(
        query_id=query.query_id,
        query=query.query,
        expected_top_k_ids=ranked,
        relevance=dict(relevant),
        retrieval_type="hybrid",  # a logged query is of no one kind
        ground_truth_source="synthetic",
        expect_empty=False,
    )


def search_tier(
    settings: RunSettings,
    pool: RetrieverPool,
    *,
    recorded: Judgments,
    interactive: bool,
    log: Log,
) -> SearchedTier:
    """The tier's queries searched by its gated retriever, from the run's pool;
    ``recorded``: the judgments file, read before the pool started any retriever."""
    path = settings.judged.queries
    queries = read_judged_queries(path)
    located = [
        LocatedFixture(_fixture(q, {}, path, line), path, line) for line, q in enumerate(queries, 1)
    ]
    searched = search_dataset(
        path,
        located,
        pool,
        name=settings.judged_retriever(),
        k=settings.k,
        interactive=interactive,
        log=log,
        label=f"{path.name} (judged tier)",
        pace=settings.progress.pace(),
    )
    return SearchedTier(path, queries, searched, recorded)


@dataclass(frozen=True)
class OnTheFly:
    judgments: Judgments  # the current judgments, with the new ones
    new: int
    cost_usd: float
    budget_out: bool
    stopped: str | None


def top_k(searched: SearchedDataset, k: int) -> dict[str, list[str]]:
    return {t.query_id: [hit.doc_id for hit in t.result.hits][:k] for t in searched.timed}


def judge_on_the_fly(
    tier: SearchedTier,
    current: Judgments,
    documents: Mapping[str, Document],
    judge: LabelJudge | None,
    *,
    k: int,
) -> OnTheFly:
    """Every pair of the top k without a current judgment, judged (cached replies cost
    nothing); with no judge (no key) they stay unjudged."""
    text = {q.query_id: q.query for q in tier.queries}
    missing = [
        pair_judging.Pair(query_id, text[query_id], doc_id, documents[doc_id].text)
        for query_id, ids in top_k(tier.searched, k).items()
        for doc_id in ids
        if (query_id, doc_id) not in current and doc_id in documents
    ]
    if not missing or judge is None:
        return OnTheFly(current, 0, 0.0, False, None)
    judged = pair_judging.judge_pairs(missing, judge)
    return OnTheFly(
        current.merged(judged.judgments.values()),
        len(judged.judgments),
        judged.cost_usd,
        judged.budget_reached,
        judged.stopped,
    )


def judged_share(rankings: Mapping[str, Sequence[str]], judgments: Judgments) -> tuple[int, int]:
    """(results in the top k with a current judgment, results in the top k)."""
    total = sum(len(ids) for ids in rankings.values())
    judged = sum((qid, doc_id) in judgments for qid, ids in rankings.items() for doc_id in ids)
    return judged, total


def reported_only(report: DatasetReport) -> DatasetReport:
    """The tier's rows when it does not gate: a failing row is shown as not gated."""
    rows = tuple(
        row.model_copy(update={"status": "not-gated", "gated": False})
        if ROW_STATUS[row.status].failing
        else row
        for row in report.rows
    )
    checks = tuple(c.model_copy(update={"failed": False}) for c in report.query_checks)
    return report.model_copy(update={"rows": rows, "query_checks": checks, "failures": ()})


def established_tier(previous: Baseline | None) -> BaselineDataset | None:
    entry = previous.judged_tier if previous is not None else None
    return None if entry is None or entry.is_null() else entry


def judge_reranks(settings: RunSettings, retriever: str) -> bool:
    """The gated retriever reranks with Claude, the judge's family of models."""
    return retriever == "hybrid" and settings.retrievers.hybrid.reranker == "claude"


def score_tier(
    tier: SearchedTier,
    *,
    settings: RunSettings,
    policy: GatePolicy,
    documents: Mapping[str, Document],
    human: Sequence[HumanDataset],
    judge: LabelJudge | None,
    previous: Baseline | None,
    corpus_fingerprint: str,
    write: bool,
    log: Log,
) -> JudgedTier:
    """The tier judged on the fly, measured, compared with the baseline's tier and told
    whether it may gate. ``judge`` None: no key (a fork's pull request)."""
    k = settings.k
    model = settings.judge.model
    rankings = top_k(tier.searched, k)
    needed = {doc_id for ids in rankings.values() for doc_id in ids}
    recorded = tier.recorded
    needed |= {doc_id for _, doc_id in recorded}
    hashes = {d: text_sha256(documents[d].text) for d in needed if d in documents}
    current = recorded.current_only(
        model=model, prompt_sha256=LABEL_PROMPT_SHA256, doc_sha256=hashes
    )
    fly = judge_on_the_fly(tier, current, documents, judge, k=k)
    if fly.stopped is not None:
        log(f"warning: {tier.path.name}: judging the new documents stopped: {fly.stopped}")
    written: str | None = None
    if write and fly.new:
        written = write_judgments(
            settings.judged.judgments, recorded.merged(fly.judgments.values())
        )
    if fly.new:
        log(
            f"judged {fly.new} new pair(s) of {tier.path.name} on the fly (${fly.cost_usd:.4f})"
            + ("" if written is not None else "; `retrieval-eval label` records them")
        )
    located = [
        LocatedFixture(
            _fixture(q, fly.judgments.relevant(q.query_id), tier.path, line), tier.path, line
        )
        for line, q in enumerate(tier.queries, 1)
    ]
    measured = measure_dataset(
        path=tier.path,
        fixtures=located,
        searched=tier.searched,
        corpus_fingerprint=corpus_fingerprint,
        measures=settings.measures,
        seed=settings.seed,
        k=k,
    )
    # Named apart from the human datasets wherever the verdict or the log names it.
    measured = measured.model_copy(update={"name": f"{tier.path.name} (judged)"})
    gated = gate_dataset(measured, established_tier(previous), settings, policy)
    agreement = tier_agreement(
        human,
        documents,
        judge,
        previous.judge_agreement if previous is not None else None,
        model=model,
        prompt_sha256=LABEL_PROMPT_SHA256,
        size=settings.judge.calibration_sample,
        seed=settings.seed,
    )
    reason = not_gating(
        agreement,
        floor=settings.judged.kappa_floor,
        key_set=judge is not None,
        budget_out=fly.budget_out,
        failed=fly.stopped is not None and not fly.budget_out,
    )
    judged, total = judged_share(rankings, fly.judgments)
    return JudgedTier(
        queries_file=tier.path.name,
        report=gated if reason is None else reported_only(gated),
        judged_at_k=None if not total else judged / total,
        results_at_k=total,
        judged_on_the_fly=fly.new,
        on_the_fly_cost_usd=fly.cost_usd,
        judgments_written=written is not None,
        judgments_sha256=written,
        agreement=agreement,
        kappa_floor=settings.judged.kappa_floor,
        gates=reason is None,
        not_gating=reason,
        judge_is_reranker=judge_reranks(settings, tier.searched.retriever),
    )


def gating_datasets(
    datasets: Sequence[DatasetReport], tier: JudgedTier | None
) -> list[DatasetReport]:
    """What the verdict is decided over: the human datasets, and the tier while it gates."""
    return [*datasets, *((tier.report,) if tier is not None and tier.gates else ())]


def tier_judge(settings: RunSettings, api_key: SecretStr | None) -> LabelJudge | None:
    """The label judge the tier asks, from ``[judge]`` (the base commit's on a pull request);
    None without a key: the tier is then reported, not gated."""
    if api_key is None or not api_key.get_secret_value():
        return None
    judge = settings.judge
    client = build_client(
        api_key=api_key.get_secret_value(),
        base_url=judge.base_url,
        max_retries=judge.max_retries,
        timeout_s=judge.timeout_s,
    )
    return pair_judging.label_judge(
        client,
        model=judge.model,
        pricing=judge.pricing(),
        max_cost_usd=judge.max_cost_usd,
        cache_dir=settings.cache_dir,
    )


def tier_recorded(tier: JudgedTier | None, previous: Baseline | None, *, rewrite: bool) -> bool:
    """Whether a run that may write the baseline records the tier in it: its values are not
    established yet (or the baseline is rewritten), or the agreement was measured anew."""
    if tier is None:
        return False
    if rewrite or tier.report.baseline_established:
        return True
    agreement = recorded_agreement(tier.agreement)
    recorded = previous.judge_agreement if previous is not None else None
    return (
        agreement is not None
        and tier.agreement is not None
        and (tier.agreement.source == "measured" and agreement != recorded)
    )


def with_tier(baseline: Baseline, tier: JudgedTier, *, k: int) -> Baseline:
    """``baseline`` with the tier's values (when not established, or rewritten) and the
    agreement it was gated on."""
    entry = baseline.judged_tier
    if entry is None or entry.is_null() or tier.report.baseline_established:
        entry = baseline_entry(tier.report, k=k)
    agreement = recorded_agreement(tier.agreement) or baseline.judge_agreement
    return baseline.model_copy(update={"judged_tier": entry, "judge_agreement": agreement})
