"""Judge a list of (query, document) pairs into judgments, within the judge's budget.

`retrieval-eval label` judges the pool of a judged tier this way, and a run judges the
documents new in a pull request's top k the same way: through ``LabelJudge``, so the
prompt, the reply cache and the cost cap are the ones the holes and the calibration use.
A pair whose reply is cached costs nothing. When the next call could pass the budget, or
a call fails, judging stops: what was judged so far is returned with the reason, so the
caller can keep it (a second run then asks only about the rest).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from retrieval_eval.load.documents import Document
from retrieval_eval.load.judgments import JudgedQuery, Judgment, Judgments, text_sha256
from retrieval_eval.score.cached_claude import CachedClaude, CostCapReached
from retrieval_eval.score.judge import JudgeError, JudgePricing
from retrieval_eval.score.label_judge import (
    LABEL_PROMPT_SHA256,
    LABEL_PROMPT_VERSION,
    RELEVANT_AT,
    LabelJudge,
)

if TYPE_CHECKING:
    import anthropic

# The judge answers on the prompt's scale: 1.0 clearly relevant, 0.5 partly, 0.0 not. A
# score is recorded as the nearest point of that scale, with the boundary between "not" and
# "partly" at the judge's own RELEVANT_AT, so grade > 0 is exactly what it calls relevant.
CLEARLY_RELEVANT_AT = 0.75
# The reply is {"score": x}: a few tokens. The cap bounds what one call may cost.
REPLY_TOKENS = 32
# The reply cache's folder under the run's cache folder, shared with the holes and the
# calibration, which ask the judge the same question about a pair.
CACHE_FOLDER = "judge-labels"


def grade_of(score: float) -> int:
    """0 not relevant, 1 partly relevant, 2 clearly relevant."""
    if score < RELEVANT_AT:
        return 0
    return 2 if score >= CLEARLY_RELEVANT_AT else 1


@dataclass(frozen=True)
class Pair:
    """One question for the judge: is this document relevant to this query?"""

    query_id: str
    query: str
    doc_id: str
    text: str  # the document's whole text; its sha256 is recorded with the judgment


@dataclass(frozen=True)
class PairJudging:
    judgments: Judgments  # the pairs judged, each stamped with model, prompt and text hash
    input_tokens: int  # of the paid calls, as the API counted them
    output_tokens: int
    cost_usd: float
    calls: int  # paid calls; the rest were answered by the reply cache
    cached: int
    # Why judging stopped before the last pair (the budget, a failed call); None: it did not.
    stopped: str | None = None
    budget_reached: bool = False


def pool(
    queries: Sequence[JudgedQuery], rankings: Iterable[Mapping[str, Sequence[str]]], depth: int
) -> list[tuple[JudgedQuery, str]]:
    """The pool, as TREC builds one: for each query, the union of every ranking's top
    ``depth`` document ids, each once. Ordered by how high a ranking places the document
    first, then by query, so a budget that runs out leaves every query its best-ranked
    documents judged rather than the first queries all of theirs."""
    tops = list(rankings)
    per_query: list[list[str]] = []
    for query in queries:
        lists = [list(dict.fromkeys(r.get(query.query_id, ())))[:depth] for r in tops]
        seen: dict[str, None] = {}
        for rank in range(depth):
            for ids in lists:
                if rank < len(ids):
                    seen.setdefault(ids[rank], None)
        per_query.append(list(seen))
    pooled: list[tuple[JudgedQuery, str]] = []
    for position in range(max((len(ids) for ids in per_query), default=0)):
        for query, ids in zip(queries, per_query, strict=True):
            if position < len(ids):
                pooled.append((query, ids[position]))
    return pooled


@dataclass(frozen=True)
class PairPlan:
    """What a pool needs: the pairs to ask the judge about, and how the rest stand."""

    to_judge: tuple[Pair, ...]  # the new and stale pairs, in pool order
    new: int  # never judged
    stale: int  # judged with another model, prompt or document text
    current: int  # judged as the judge would be asked now: nothing to do
    missing: tuple[str, ...] = ()  # pooled ids the corpus does not hold (not judged)


def plan_pairs(
    pooled: Sequence[tuple[JudgedQuery, str]],
    documents: Mapping[str, Document],
    existing: Judgments,
    *,
    model: str,
) -> PairPlan:
    """Split the pool into the pairs without a current judgment (``model`` and today's
    prompt) and those already current."""
    to_judge: list[Pair] = []
    new = stale = current = 0
    missing: list[str] = []
    for query, doc_id in pooled:
        doc = documents.get(doc_id)
        if doc is None:
            missing.append(doc_id)
            continue
        pair = Pair(query.query_id, query.query, doc_id, doc.text)
        found = existing.get((query.query_id, doc_id))
        if found is None:
            new += 1
        elif found.is_current(
            model=model, prompt_sha256=LABEL_PROMPT_SHA256, doc_sha256=text_sha256(doc.text)
        ):
            current += 1
            continue
        else:
            stale += 1
        to_judge.append(pair)
    return PairPlan(
        to_judge=tuple(to_judge),
        new=new,
        stale=stale,
        current=current,
        missing=tuple(dict.fromkeys(missing)),
    )


def label_judge(
    client: anthropic.Anthropic | None,
    *,
    model: str,
    pricing: JudgePricing,
    max_cost_usd: float,
    cache_dir: Path,
) -> LabelJudge:
    """The label judge over the run's reply cache (``cache_dir``: the run's cache folder).
    ``client`` None: only cached replies can be had; any other pair stops the judging."""
    return LabelJudge(
        CachedClaude(
            client,
            model=model,
            prompt_version=LABEL_PROMPT_VERSION,
            cache_dir=cache_dir / CACHE_FOLDER,
            pricing=pricing,
            max_cost_usd=max_cost_usd,
            failure=JudgeError,
            max_tokens=REPLY_TOKENS,
            missing_key="set ANTHROPIC_API_KEY to judge the rest",
        )
    )


def judge_pairs(pairs: Sequence[Pair], judge: LabelJudge) -> PairJudging:
    """Each pair judged once, in order, until the budget or a failure stops it."""
    found: list[Judgment] = []
    spent_before, calls_before = judge.spent_usd, judge.calls
    tokens_before = judge.tokens
    cached = 0
    stopped: str | None = None
    budget_reached = False
    for pair in pairs:
        try:
            judged = judge.judge(pair.query_id, pair.query, pair.doc_id, pair.text)
        except CostCapReached as error:
            stopped, budget_reached = error.message, True
            break
        except JudgeError as error:
            stopped = error.message
            break
        cached += judged.cached
        found.append(
            Judgment(
                query_id=pair.query_id,
                doc_id=pair.doc_id,
                grade=grade_of(judged.judgement.score),
                judge_model=judge.model,
                prompt_sha256=LABEL_PROMPT_SHA256,
                doc_sha256=text_sha256(pair.text),
            )
        )
    tokens = judge.tokens
    return PairJudging(
        judgments=Judgments(found),
        input_tokens=tokens[0] - tokens_before[0],
        output_tokens=tokens[1] - tokens_before[1],
        cost_usd=judge.spent_usd - spent_before,
        calls=judge.calls - calls_before,
        cached=cached,
        stopped=stopped,
        budget_reached=budget_reached,
    )
