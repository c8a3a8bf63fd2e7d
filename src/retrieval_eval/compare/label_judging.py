"""The judge asked about labels, after the gate: holes and calibration.

Holes are the unlabelled documents that newly entered a regressed query's top k
(``compare/labels.py`` finds them); each gets the judge's view beside it in the
report, so the person who runs `review --holes` has a second opinion. Calibration
measures that opinion against the labels a dataset already carries: a seeded sample
of (query, expected document) pairs of human-annotated fixtures is the relevant
class, and the same queries' best-ranked non-expected documents the other. Those are
*unlabelled*, not known to be irrelevant, so a judge that calls some of them
relevant may be finding missing labels; docs/golden-datasets.md says how to read it.

Nothing here changes a verdict or a golden set. The calls share one cost cap
(``[judge] max_cost_usd``, ``run --max-cost-usd``): when the next call could pass it,
judging stops and the report says how far it got.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from retrieval_eval.load.documents import Document
from retrieval_eval.load.fixtures import LocatedFixture
from retrieval_eval.progress import Log
from retrieval_eval.results import Calibration, DatasetReport
from retrieval_eval.score.cached_claude import CostCapReached
from retrieval_eval.score.label_judge import LabelJudge
from retrieval_eval.score.stats import Agreement


def judge_holes(
    report: DatasetReport, documents: Mapping[str, Document], judge: LabelJudge, log: Log
) -> DatasetReport:
    """Each hole of each regressed query with the judge's view (cached calls are free)."""
    comparison = report.comparison
    if comparison is None or not any(m.holes for m in comparison.regressed_most):
        return report
    moves = []
    stopped: str | None = None
    for move in comparison.regressed_most:
        holes = []
        for hole in move.holes:
            doc = documents.get(hole.doc_id)
            if stopped is None and doc is not None:
                try:
                    judged = judge.judge(move.query_id, move.query, hole.doc_id, doc.text)
                    hole = hole.model_copy(update={"judge": judged.judgement})
                except CostCapReached as error:
                    stopped = str(error)
            holes.append(hole)
        moves.append(move.model_copy(update={"holes": tuple(holes)}))
    if stopped is not None:
        log(f"warning: {report.name}: not every hole was judged: {stopped}")
    updated = comparison.model_copy(update={"regressed_most": tuple(moves)})
    return report.model_copy(update={"comparison": updated})


@dataclass(frozen=True)
class Pair:
    query_id: str
    query: str
    doc_id: str
    expected: bool


def calibration_sample(
    fixtures: Sequence[LocatedFixture], report: DatasetReport, *, size: int, seed: int
) -> list[Pair]:
    """Up to ``size`` pairs, half from each class, drawn with ``seed``; interleaved, so a
    cost cap leaves both classes judged."""
    retrieved = {q.query_id: q for q in report.queries}
    human = [
        lf.fixture
        for lf in sorted(fixtures, key=lambda lf: lf.fixture.query_id)
        if lf.fixture.ground_truth_source == "human-annotated" and not lf.fixture.expect_empty
    ]
    relevant = [Pair(f.query_id, f.query, d, True) for f in human for d in f.expected_top_k_ids]
    other = [
        Pair(f.query_id, f.query, retrieved[f.query_id].unlabelled_ids[0], False)
        for f in human
        if f.query_id in retrieved and retrieved[f.query_id].unlabelled_ids
    ]
    rng = random.Random(seed)
    chosen_other = rng.sample(other, min(len(other), size // 2))
    chosen_relevant = rng.sample(relevant, min(len(relevant), size - len(chosen_other)))
    pairs: list[Pair] = []
    for index in range(max(len(chosen_relevant), len(chosen_other))):
        pairs += chosen_relevant[index : index + 1] + chosen_other[index : index + 1]
    return pairs


def calibrate(
    report: DatasetReport,
    fixtures: Sequence[LocatedFixture],
    documents: Mapping[str, Document],
    judge: LabelJudge,
    *,
    size: int,
    seed: int,
    log: Log,
) -> DatasetReport:
    """The dataset with the judge's agreement with its human labels; unchanged when it
    has no human-annotated pair to sample or ``size`` is 0."""
    sample = calibration_sample(fixtures, report, size=size, seed=seed)
    pairs = [p for p in sample if p.doc_id in documents]
    if not pairs:
        return report
    judged = judge_sample(pairs, documents, judge)
    agreement = judged.agreement
    if judged.stopped is not None:
        log(f"warning: {report.name}: calibration {judged.stopped}")
    calibration = Calibration(
        model=judge.model,
        seed=seed,
        sample_size=agreement.total,
        labelled_relevant=judged.relevant,
        labelled_other=judged.other,
        true_positive=agreement.true_positive,
        false_negative=agreement.false_negative,
        false_positive=agreement.false_positive,
        true_negative=agreement.true_negative,
        accuracy=agreement.accuracy(),
        kappa=agreement.kappa(),
        cost_usd=judged.cost_usd,
        stopped=judged.stopped,
    )
    return report.model_copy(update={"calibration": calibration})


@dataclass(frozen=True)
class JudgedSample:
    agreement: Agreement
    relevant: int  # pairs of the relevant class judged
    other: int
    cost_usd: float
    stopped: str | None  # why judging stopped before the last pair (the cost cap)


def judge_sample(
    pairs: Sequence[Pair], documents: Mapping[str, Document], judge: LabelJudge
) -> JudgedSample:
    """The judge's answer on each pair (in order, until the cost cap) against its class."""
    counts = {"tp": 0, "fn": 0, "fp": 0, "tn": 0}
    judged = {"relevant": 0, "other": 0}
    cost = 0.0
    stopped = None
    for pair in pairs:
        try:
            text = documents[pair.doc_id].text
            answer = judge.judge(pair.query_id, pair.query, pair.doc_id, text)
        except CostCapReached as error:
            stopped = f"stopped after {sum(counts.values())} of {len(pairs)} pairs: {error}"
            break
        cost += answer.cost_usd
        said = answer.judgement.relevant
        key = ("tp" if said else "fn") if pair.expected else ("fp" if said else "tn")
        counts[key] += 1
        judged["relevant" if pair.expected else "other"] += 1
    agreement = Agreement(counts["tp"], counts["fn"], counts["fp"], counts["tn"])
    return JudgedSample(agreement, judged["relevant"], judged["other"], cost, stopped)
