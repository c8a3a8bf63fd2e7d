"""Rank a parsed run the way trec_eval does and find where the relevant documents landed.

trec_eval ignores the rank column: it sorts each query's results by score
descending and breaks ties by document id descending (``strcmp`` order). Most
run files are already written in that order, so we verify it with one
vectorised pass over adjacent lines and only sort the queries that violate it.

Documents are matched to judgments through a 64-bit hash of (query, document),
and every hash match is then confirmed on the exact packed bytes, so a hash
collision can cost time but never a wrong number.
"""

from __future__ import annotations

import numpy as np

from retrieval_eval.errors import InputError
from retrieval_eval.score.ranked import IntArray, RankedHits, ideal_from_grades
from retrieval_eval.score.trec_files import Columns
from retrieval_eval.score.trec_values import WordArray, decode, order_keys, widen

_MIX = (
    np.uint64(0x9E3779B97F4A7C15),
    np.uint64(0xC2B2AE3D27D4EB4F),
    np.uint64(0x165667B19E3779F9),
    np.uint64(0xD6E8FEB86659FD93),
)


def rank_against_qrels(qrels: Columns, run: Columns, *, complete: bool) -> RankedHits:
    """Hits for trec_eval's query set: qrels queries that the run has (all of them if ``complete``).

    Queries come out sorted by id, in trec_eval's ``strcmp`` order.
    """
    qrels_index = {qid: index for index, qid in enumerate(qrels.query_ids)}
    run_to_qrels = np.array([qrels_index.get(qid, -1) for qid in run.query_ids], dtype=np.int64)
    run_query_in_qrels = run_to_qrels[run.query] if run.query.size else run.query
    width = max(qrels.doc_words.shape[1], run.doc_words.shape[1])
    qrels_docs, run_docs = widen(qrels.doc_words, width), widen(run.doc_words, width)
    grades = np.asarray(qrels.value, dtype=np.int64)
    _reject_duplicate_judgments(qrels, qrels_docs)

    rank = _trec_ranks(run)
    # Join in the run's query numbering, so the run's keys rise with its lines.
    qrels_to_run = np.full(len(qrels.query_ids), -1, dtype=np.int64)
    known = run_to_qrels >= 0
    qrels_to_run[run_to_qrels[known]] = np.flatnonzero(known)
    judged_in_run = qrels_to_run[qrels.query]
    has_run = judged_in_run >= 0
    matched_row, judged_subset = _match(
        judged_in_run[has_run], qrels_docs[has_run], np.where(run_query_in_qrels >= 0, run.query, -1), run_docs
    )
    matched_judgment = np.flatnonzero(has_run)[judged_subset]
    _reject_duplicate_results(run, matched_row, matched_judgment, qrels)

    retrieved_per_qrels_query = np.bincount(
        run_query_in_qrels[run_query_in_qrels >= 0], minlength=len(qrels.query_ids)
    )
    order = sorted(range(len(qrels.query_ids)), key=qrels.query_ids.__getitem__)
    selected = [q for q in order if complete or retrieved_per_qrels_query[q] > 0]
    position = np.full(len(qrels.query_ids), -1, dtype=np.int64)
    position[np.asarray(selected, dtype=np.int64)] = np.arange(len(selected), dtype=np.int64)

    hit_grade = grades[matched_judgment]
    relevant = hit_grade >= 1
    hit_query = position[qrels.query[matched_judgment[relevant]]]
    keep = hit_query >= 0
    hit_query = hit_query[keep]
    hit_rank = rank[matched_row[relevant]][keep]
    hit_gain = hit_grade[relevant][keep].astype(np.float64)
    by_query_rank = np.lexsort((hit_rank, hit_query))

    judged_query = position[qrels.query]
    in_scope = judged_query >= 0
    num_rel, offsets, ideal = ideal_from_grades(judged_query[in_scope], grades[in_scope], len(selected))
    return RankedHits(
        query_ids=tuple(qrels.query_ids[q] for q in selected),
        num_ret=retrieved_per_qrels_query[np.asarray(selected, dtype=np.int64)].astype(np.int64),
        num_rel=num_rel,
        hit_query=hit_query[by_query_rank],
        hit_rank=hit_rank[by_query_rank],
        hit_gain=hit_gain[by_query_rank],
        ideal_offsets=offsets,
        ideal_gains=ideal,
    )


def _trec_ranks(run: Columns) -> IntArray:
    """1-based rank of every run line under trec_eval's ordering."""
    rows = run.query.size
    scores = np.asarray(run.value, dtype=np.float64)
    keys = order_keys(run.doc_words)
    if not run.contiguous:
        order = _sort_trec(run.query, scores, keys)
        return _ranks_from_order(run.query, order)
    starts = run.segment_starts
    rank = np.arange(rows, dtype=np.int64) - np.repeat(starts, np.diff(np.append(starts, rows))) + 1
    same_query = run.query[1:] == run.query[:-1]
    in_order = (scores[:-1] > scores[1:]) | ((scores[:-1] == scores[1:]) & _descending(keys[:-1], keys[1:]))
    broken = same_query & ~in_order
    if not bool(broken.any()):
        return rank
    bad_queries = np.unique(run.query[1:][broken])
    rows_to_sort = np.flatnonzero(np.isin(run.query, bad_queries))
    order = _sort_trec(run.query[rows_to_sort], scores[rows_to_sort], keys[rows_to_sort])
    rank[rows_to_sort] = _ranks_from_order(run.query[rows_to_sort], order)
    return rank


def _descending(left: WordArray, right: WordArray) -> np.ndarray:
    """Row-wise left > right in lexicographic (strcmp) order of big-endian words."""
    greater = np.zeros(left.shape[0], dtype=bool)
    equal = np.ones(left.shape[0], dtype=bool)
    for column in range(left.shape[1]):
        greater |= equal & (left[:, column] > right[:, column])
        equal &= left[:, column] == right[:, column]
    return greater


def _sort_trec(query: IntArray, scores: np.ndarray, keys: WordArray) -> IntArray:
    reversed_ids = tuple(~keys[:, column] for column in range(keys.shape[1] - 1, -1, -1))
    return np.lexsort((*reversed_ids, -scores, query)).astype(np.int64)


def _ranks_from_order(query: IntArray, order: IntArray) -> IntArray:
    """Ranks for rows, given an order that groups queries and ranks within them."""
    sorted_query = query[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = sorted_query[1:] != sorted_query[:-1]
    starts = np.flatnonzero(first)
    within = np.arange(order.size, dtype=np.int64) - np.repeat(starts, np.diff(np.append(starts, order.size)))
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = within + 1
    return rank


def _keys(query: IntArray, docs: WordArray, query_bits: int) -> np.ndarray:
    """Query index in the high bits, a hash of the document id in the rest.

    Keeping the query in the high bits makes the run's keys rise with its lines, so
    the binary searches below walk memory forward instead of jumping at random.
    """
    value = np.full(query.size, _MIX[0], dtype=np.uint64)
    for column in range(docs.shape[1]):
        mixed = (docs[:, column] ^ value) * _MIX[(column % 3) + 1]
        value = mixed ^ (mixed >> np.uint64(31))
    hash_bits = 64 - query_bits
    return (query.astype(np.uint64) << np.uint64(hash_bits)) | (value >> np.uint64(query_bits))


def _match(
    judged_query: IntArray, judged_docs: WordArray, run_query: IntArray, run_docs: WordArray
) -> tuple[IntArray, IntArray]:
    """(run row, qrels row) pairs naming the same query and document.

    ``run_query`` is -1 for rows whose query has no judgments; both query arrays
    must use the same numbering, ideally rising with the run's lines.
    """
    if judged_query.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    query_bits = max(1, int(max(int(judged_query.max()), int(run_query.max(initial=0))) + 1).bit_length())
    judged_keys = _keys(judged_query, judged_docs, query_bits)
    order = np.argsort(judged_keys, kind="stable")
    sorted_keys = judged_keys[order]
    if bool((sorted_keys[1:] == sorted_keys[:-1]).any()):
        return _match_exact(judged_query, judged_docs, run_query, run_docs)
    candidates = np.flatnonzero(run_query >= 0)
    run_keys = _keys(run_query[candidates], run_docs[candidates], query_bits)
    slot = np.searchsorted(sorted_keys, run_keys)
    np.minimum(slot, sorted_keys.size - 1, out=slot)
    found = sorted_keys[slot] == run_keys
    rows, judgments = candidates[found], order[slot[found]]
    exact = (judged_query[judgments] == run_query[rows]) & (judged_docs[judgments] == run_docs[rows]).all(axis=1)
    return rows[exact], judgments[exact]


def _match_exact(
    judged_query: IntArray, judged_docs: WordArray, run_query: IntArray, run_docs: WordArray
) -> tuple[IntArray, IntArray]:
    """Slow but collision-free matching through Python dictionaries."""
    table = {
        (int(q), docs.tobytes()): index
        for index, (q, docs) in enumerate(zip(judged_query, judged_docs, strict=True))
    }
    rows: list[int] = []
    judgments: list[int] = []
    for row in np.flatnonzero(run_query >= 0).tolist():
        index = table.get((int(run_query[row]), run_docs[row].tobytes()))
        if index is not None:
            rows.append(row)
            judgments.append(index)
    return np.asarray(rows, dtype=np.int64), np.asarray(judgments, dtype=np.int64)


def _reject_duplicate_judgments(qrels: Columns, docs: WordArray) -> None:
    """trec_eval refuses a qrels file that judges one document twice for a query."""
    keys = np.lexsort((*(docs[:, c] for c in range(docs.shape[1] - 1, -1, -1)), qrels.query))
    same = (qrels.query[keys][1:] == qrels.query[keys][:-1]) & (docs[keys][1:] == docs[keys][:-1]).all(axis=1)
    if bool(same.any()):
        second = int(max(keys[1:][same][0], keys[:-1][same][0]))
        qid, doc = qrels.query_ids[int(qrels.query[second])], decode(docs[second])
        raise InputError(
            f"document {doc!r} is judged twice for query {qid!r}; keep one line",
            file=qrels.path,
            line=int(qrels.line_numbers[second]),
        )


def _reject_duplicate_results(run: Columns, rows: IntArray, judgments: IntArray, qrels: Columns) -> None:
    """A judged document listed twice for a query would be counted twice; trec_eval refuses it too."""
    if judgments.size == 0:
        return
    counts = np.bincount(judgments)
    if int(counts.max()) <= 1:
        return
    judgment = int(np.flatnonzero(counts > 1)[0])
    second = int(np.sort(rows[judgments == judgment])[1])
    qid = qrels.query_ids[int(qrels.query[judgment])]
    raise InputError(
        f"document {decode(run.doc_words[second])!r} appears twice for query {qid!r}; each document once per query",
        file=run.path,
        line=int(run.line_numbers[second]),
    )
