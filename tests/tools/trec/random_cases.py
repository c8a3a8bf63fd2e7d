"""Seeded random qrels/run pairs that stress what trec_eval users trip over.

Score ties (scores drawn from a handful of values), graded and negative grades,
queries missing from the run, run-only queries, queries judged with nothing
relevant, rankings shorter and longer than the cut-offs, ids of 1-20 bytes (so
packed keys span one to three words and ids are prefixes of each other), lines
in trec_eval order, shuffled, or with queries interleaved.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

_ALPHABET = np.array(list("abcXYZ019-_."))


@dataclass(frozen=True)
class Case:
    qrels: dict[str, dict[str, int]]
    run: dict[str, dict[str, float]]
    score_text: dict[tuple[str, str], str]  # what the run file says for each score
    line_order: str  # "trec", "shuffled" or "interleaved"


def _doc_id(rng: np.random.Generator) -> str:
    length = int(rng.choice([1, 2, 3, 7, 8, 9, 12, 16, 17, 20]))
    return "".join(rng.choice(_ALPHABET, size=length))


def random_case(seed: int) -> Case:
    rng = np.random.default_rng(seed)
    pool = list(dict.fromkeys(_doc_id(rng) for _ in range(60)))
    pool += [pool[0] + "a", pool[0] + "b"]  # ids that extend another id
    pool = list(dict.fromkeys(pool))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    score_text: dict[tuple[str, str], str] = {}
    short_scores = bool(rng.random() < 0.5)
    for index in range(int(rng.integers(1, 7))):
        qid = str(int(rng.integers(0, 1000))) if rng.random() < 0.5 else f"Q{index}"
        if qid in qrels or qid in run:
            continue
        if rng.random() < 0.9:
            judged = rng.choice(len(pool), size=int(rng.integers(1, 12)), replace=False)
            # grades -1..3; about one query in eight has nothing relevant
            top = 1 if rng.random() < 0.12 else 4
            qrels[qid] = {pool[j]: int(rng.integers(-1, top)) for j in judged}
        if rng.random() < 0.15 and qid in qrels:
            continue  # judged but missing from the run
        depth = int(rng.integers(1, 26))
        chosen = rng.choice(len(pool), size=min(depth, len(pool)), replace=False)
        run[qid] = {}
        for j in chosen:
            doc = pool[j]
            if short_scores:
                text = f"{rng.integers(-2, 4) / 2:.1f}"
            else:
                text = repr(float(rng.choice([0.25, 1.0 / 3.0, float(rng.normal())])))
            run[qid][doc] = float(text)
            score_text[(qid, doc)] = text
    if not run:  # keep at least one line in the run file
        qid = "only_run"
        run[qid] = {pool[0]: 1.0}
        score_text[(qid, pool[0])] = "1.0"
    line_order = str(rng.choice(["trec", "shuffled", "interleaved"]))
    return Case(qrels, run, score_text, line_order)


def write_case(case: Case, folder: Path, seed: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"
    qrels_lines = [
        f"{qid} 0 {doc} {grade}\n"
        for qid, docs in case.qrels.items()
        for doc, grade in docs.items()
    ]
    if not qrels_lines:
        qrels_lines = ["never_in_run 0 nothing 1\n"]
    qrels_path.write_text("".join(qrels_lines))
    rows: list[tuple[str, str]] = []
    for qid, docs in case.run.items():
        ordered = sorted(docs, key=lambda doc: (-docs[doc], _Reverse(doc)))
        if case.line_order != "trec":
            ordered = [ordered[i] for i in rng.permutation(len(ordered))]
        rows.extend((qid, doc) for doc in ordered)
    if case.line_order == "interleaved":
        rows = [rows[i] for i in rng.permutation(len(rows))]
    ranks = rng.integers(1, 1000, size=len(rows))  # trec_eval ignores the rank column
    run_path.write_text(
        "".join(
            f"{qid} Q0 {doc} {rank} {case.score_text[(qid, doc)]} tag\n"
            for (qid, doc), rank in zip(rows, ranks.tolist(), strict=True)
        )
    )
    return qrels_path, run_path


class _Reverse:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __lt__(self, other: _Reverse) -> bool:
        return self.text.encode() > other.text.encode()
