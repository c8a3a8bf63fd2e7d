"""Rank a parsed run the way trec_eval does and find where the relevant documents landed.

trec_eval ignores the rank column: it sorts each query's results by score
descending and breaks ties by document id descending (``strcmp`` order). Most
run files are already written in that order, so we verify it with one
vectorised pass over adjacent lines; ranks are needed only for the few lines
that match a judgment, and only in queries that break the order (every query of
a run regrouped from scattered lines) are they computed rather than read off.

Documents are matched to judgments by a key of (query, 64-bit hash of the id),
and each key match is confirmed on the exact id bytes, so a hash collision can
cost time but never a wrong number. Work on per-line arrays goes in chunks of
CHUNK_ROWS lines so temporaries stay in cache instead of page-faulting 80 MB
arrays into existence.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import NoReturn

import numpy as np

from retrieval_eval.errors import InputError
from retrieval_eval.score.ranked import IntArray, RankedHits
from retrieval_eval.tools.trec.hits import TrecHits
from retrieval_eval.tools.trec.text.files import Columns, LineMap, grouped_by_query
from retrieval_eval.tools.trec.text.values import (
    WordArray,
    as_bytes_strings,
    order_keys,
    take_ids,
    widen,
)

CHUNK_ROWS = 1 << 16
_MIX = (
    np.uint64(0x9E3779B97F4A7C15),
    np.uint64(0xC2B2AE3D27D4EB4F),
    np.uint64(0x165667B19E3779F9),
    np.uint64(0xD6E8FEB86659FD93),
)


def rank_against_qrels(qrels: Columns, run: Columns, *, complete: bool) -> RankedHits:
    """Relevant hits (grade >= 1) for trec_eval's query set; see :func:`judge_run`."""
    return judge_run(qrels, run, complete=complete).ranked(1)


def judge_run(
    qrels: Columns, run: Columns, *, complete: bool, max_docs: int | None = None
) -> TrecHits:
    """Judged hits for trec_eval's query set: qrels queries that the run has (all if ``complete``).

    Queries come out sorted by id, in trec_eval's ``strcmp`` order. ``max_docs`` is
    trec_eval's ``-M``: only each query's top ``max_docs`` results count.
    """
    run = grouped_by_query(run)
    by_id, run_to_qrels = _join_query_ids(qrels, run)
    width = max(qrels.doc_words.shape[1], run.doc_words.shape[1])
    qrels_docs, run_docs = widen(qrels.doc_words, width), widen(run.doc_words, width)
    grades = np.asarray(qrels.value, dtype=np.int64)

    # Join in the run's query numbering, so the run's keys rise with its lines.
    qrels_to_run = np.full(len(qrels.query_ids), -1, dtype=np.int64)
    known = run_to_qrels >= 0
    qrels_to_run[run_to_qrels[known]] = np.flatnonzero(known)
    qrels_query = qrels.query_rows()
    judged_in_run = qrels_to_run[qrels_query]
    has_run = judged_in_run >= 0
    run_query_joined = np.where(known, np.arange(len(run.query_ids), dtype=np.int64), -1)
    judged_rows = np.flatnonzero(has_run)
    try:
        matched_row, judged_subset = _match(
            judged_in_run[has_run], qrels_docs[has_run], run, run_query_joined, run_docs
        )
    except _DuplicateJudgmentError as duplicate:
        _reject_duplicate_judgment(qrels, qrels_docs, int(judged_rows[duplicate.second]))
    matched_judgment = judged_rows[judged_subset]
    rank = _trec_ranks(run, matched_row)

    retrieved = run.rows_per_query()
    if max_docs is not None:
        np.minimum(retrieved, max_docs, out=retrieved)
        within = rank <= max_docs
        matched_judgment, rank = matched_judgment[within], rank[within]
    retrieved_per_qrels_query = np.zeros(len(qrels.query_ids), dtype=np.int64)
    retrieved_per_qrels_query[run_to_qrels[known]] = retrieved[known]
    in_run = np.zeros(len(qrels.query_ids), dtype=bool)
    in_run[run_to_qrels[known]] = True
    selected = by_id if complete else by_id[in_run[by_id]]
    position = np.full(len(qrels.query_ids), -1, dtype=np.int64)
    position[selected] = np.arange(selected.size, dtype=np.int64)

    hit_query = position[qrels_query[matched_judgment]]
    keep = hit_query >= 0
    hit_query, hit_rank = hit_query[keep], rank[keep]
    hit_grade = grades[matched_judgment][keep]
    by_query_rank = np.lexsort((hit_rank, hit_query))

    judged_query = position[qrels_query]
    in_scope = judged_query >= 0
    return TrecHits(
        query_ids=take_ids(qrels.query_ids, selected),
        num_ret=retrieved_per_qrels_query[selected],
        judged_query=hit_query[by_query_rank],
        judged_rank=hit_rank[by_query_rank],
        judged_grade=hit_grade[by_query_rank],
        qrels_query=judged_query[in_scope],
        qrels_grade=grades[in_scope],
        runid=run.runid,
    )


def _join_query_ids(qrels: Columns, run: Columns) -> tuple[IntArray, IntArray]:
    """(qrels queries in trec_eval's strcmp order of ids, qrels index of each run query or -1).

    Done on the packed ids in numpy (one sort, one binary search), not in Python: a
    million queries cost a Python dictionary and sort about a second each.
    """
    assert qrels.query_words is not None and run.query_words is not None
    width = max(qrels.query_words.shape[1], run.query_words.shape[1])
    qrels_ids = _sortable_ids(widen(qrels.query_words, width))
    run_ids = _sortable_ids(widen(run.query_words, width))
    by_id = np.argsort(qrels_ids).astype(np.int64)  # ids are distinct: any sort is stable
    ordered = qrels_ids[by_id]
    at = np.minimum(np.searchsorted(ordered, run_ids), ordered.size - 1)
    return by_id, np.where(ordered[at] == run_ids, by_id[at], -1)


def _sortable_ids(words: WordArray) -> np.ndarray:
    """Ids as an array whose order is strcmp order: big-endian words, or byte strings."""
    if words.shape[1] == 1:
        return order_keys(words)[:, 0]
    return as_bytes_strings(words)


def _chunks(rows: int) -> range:
    return range(0, rows, CHUNK_ROWS)


def _trec_ranks(run: Columns, rows: IntArray) -> IntArray:
    """1-based trec_eval rank of each of ``rows`` (run line indices)."""
    scores = np.asarray(run.value, dtype=np.float64)
    starts = run.segment_starts
    segment = np.searchsorted(starts, rows, side="right") - 1
    rank = rows - starts[segment] + 1
    if run.regrouped:  # brought together from scattered lines: assume nothing is in order
        return _sorted_ranks(run, scores, rows)
    broken = _queries_out_of_order(run, scores)
    if broken.size == 0:
        return rank
    inside = np.flatnonzero(np.isin(segment, broken))
    rank[inside] = _sorted_ranks(run, scores, rows[inside])
    return rank


def _sorted_ranks(run: Columns, scores: np.ndarray, rows: IntArray) -> IntArray:
    """trec_eval rank of each of ``rows`` within its query (score descending, id descending).

    Only the ranks asked for are computed, a chunk of whole queries at a time, in
    cache. A row's rank is one more than the lines of its query that beat it: see
    :func:`_ranks_by_rows`, or, where the chunk's queries differ so much in length that
    a padded matrix would be mostly padding, :func:`_ranks_by_sorting`.
    """
    by_row = np.argsort(rows, kind="stable")
    sorted_rows = rows[by_row]
    out = np.empty(rows.size, dtype=np.int64)
    for start, stop in _query_chunks(run):
        lo, hi = np.searchsorted(sorted_rows, [start, stop])
        if lo == hi:
            continue
        wanted = sorted_rows[lo:hi] - start
        first, last = np.searchsorted(run.segment_starts, [start, stop])
        local_starts = run.segment_starts[first:last] - start  # a chunk starts a query
        segment = np.zeros(stop - start, dtype=np.int64)
        segment[local_starts[1:]] = 1
        np.cumsum(segment, out=segment)
        lengths = np.diff(np.append(local_starts, stop - start))
        chunk_scores = scores[start:stop]
        if local_starts.size * int(lengths.max()) <= 4 * (stop - start):
            rank = _ranks_by_rows(run, chunk_scores, start, segment, local_starts, wanted)
        else:  # queries of very different lengths: a padded matrix would be mostly padding
            rank = _ranks_by_sorting(run, chunk_scores, start, segment, local_starts, wanted)
        out[by_row[lo:hi]] = rank
    return out


def _ranks_by_rows(
    run: Columns,
    scores: np.ndarray,
    start: int,
    segment: IntArray,
    local_starts: IntArray,
    wanted: IntArray,
) -> IntArray:
    """Ranks of ``wanted`` (chunk offsets) from a padded (query x line) matrix of scores.

    Each matrix row (a query's negated scores, +inf padding) is sorted -- many small
    sorts, fast -- and a binary search in its query's row counts the higher scores.
    A row whose score occurs twice in its query is settled by comparing it with every
    line of its query: the higher scores, then the equal scores with a greater id.
    """
    lengths = np.diff(np.append(local_starts, scores.size))
    width = int(lengths.max())
    column = np.arange(scores.size, dtype=np.int64) - local_starts[segment]
    padded = np.full((local_starts.size, width), np.inf)
    padded[segment, column] = -scores
    ordered = np.sort(padded, axis=1).reshape(-1)
    query = segment[wanted]
    target = -scores[wanted]
    base = query * width - 1
    # Values below the target in the sorted row (padding, +inf, never is), by binary
    # lifting: add each power of two, largest first, while the value before stays below.
    low = np.zeros(wanted.size, dtype=np.int64)
    step = 1 << (width.bit_length() - 1)
    while step:
        ahead = low + step
        below = ordered[base + np.minimum(ahead, width)] < target
        below &= ahead <= width
        low += below * step
        step >>= 1
    base += 1
    rank = low + 1
    after = np.minimum(low + 1, width - 1)
    tied = np.flatnonzero((low + 1 < lengths[query]) & (ordered[base + after] == target))
    if tied.size:
        rows = padded[query[tied]]  # the query's lines in order, negated scores
        asker, line_column = np.nonzero(rows == target[tied][:, None])
        real = line_column < lengths[query[tied[asker]]]  # padding equals a score of -inf
        asker, line_column = asker[real], line_column[real]
        line = local_starts[query[tied[asker]]] + line_column
        doc_keys = order_keys(run.doc_words[start + line])
        beats = _greater(doc_keys, order_keys(run.doc_words[start + wanted[tied[asker]]]))
        rank[tied] += np.bincount(asker[beats], minlength=tied.size)
    return rank


def _ranks_by_sorting(
    run: Columns,
    scores: np.ndarray,
    start: int,
    segment: IntArray,
    local_starts: IntArray,
    wanted: IntArray,
) -> IntArray:
    """Ranks of ``wanted`` (chunk offsets) from the chunk's sorted (query, score) keys.

    Each line gets a 64-bit key of (query within the chunk, score order truncated into
    the low bits); binary searches in the sorted keys count those below a row's own, and
    lines with an equal key (ties, or scores too close for the truncated bits) are
    sorted exactly.
    """
    query_bits = max(1, int(local_starts.size).bit_length())
    line_keys = _score_keys(segment, scores, query_bits)
    own = line_keys[wanted]
    keys = np.sort(line_keys)
    below = np.searchsorted(keys, own, side="left")
    tied = np.searchsorted(keys, own, side="right") - below
    rank = below - local_starts[segment[wanted]] + 1
    ambiguous = np.flatnonzero(tied > 1)
    if ambiguous.size:
        rank[ambiguous] += _beaten_among_ties(run, scores, start, line_keys, wanted[ambiguous])
    return rank


def _beaten_among_ties(
    run: Columns, scores: np.ndarray, start: int, line_keys: np.ndarray, wanted: IntArray
) -> IntArray:
    """Lines with the key of each of ``wanted`` (chunk offsets) that trec_eval ranks above it."""
    tie_keys = np.unique(line_keys[wanted])
    at = np.minimum(np.searchsorted(tie_keys, line_keys), tie_keys.size - 1)
    member = np.flatnonzero(tie_keys[at] == line_keys)  # ascending chunk offsets
    group = at[member]
    doc_keys = order_keys(run.doc_words[member + start])
    # Within a group: score descending, then id descending (lexsort's last key is primary).
    words = [~doc_keys[:, w] for w in range(doc_keys.shape[1] - 1, -1, -1)]
    order = np.lexsort((*words, -scores[member], group))
    position = np.empty(member.size, dtype=np.int64)
    position[order] = np.arange(member.size, dtype=np.int64)
    group_first = np.searchsorted(group[order], np.arange(tie_keys.size))
    within = position - group_first[group]
    return within[np.searchsorted(member, wanted)]


def _score_keys(query: IntArray, scores: np.ndarray, query_bits: int) -> np.ndarray:
    """(query, score) in one word; a smaller key is an earlier query or a higher score."""
    bits = (scores + 0.0).view(np.uint64)  # + 0.0 turns -0.0 into 0.0: they tie
    negative = (bits >> np.uint64(63)).astype(bool)
    ascending = np.where(negative, ~bits, bits | np.uint64(1 << 63))
    return (query.astype(np.uint64) << np.uint64(64 - query_bits)) | (
        ~ascending >> np.uint64(query_bits)
    )


def _queries_out_of_order(run: Columns, scores: np.ndarray) -> IntArray:
    """Segments (= queries, for a contiguous run) whose lines are not in trec_eval order."""
    bad: list[IntArray] = []
    total = run.rows
    for start in _chunks(total):
        stop = min(start + CHUNK_ROWS + 1, total)  # one row of overlap for the pair across chunks
        query = run.query_rows(start, stop)
        score = scores[start:stop]
        keys = order_keys(run.doc_words[start:stop])
        same_query = query[1:] == query[:-1]
        in_order = (score[:-1] > score[1:]) | (
            (score[:-1] == score[1:]) & _greater(keys[:-1], keys[1:])
        )
        broken = np.flatnonzero(same_query & ~in_order)
        if broken.size:
            bad.append(broken + start + 1)
    if not bad:
        return np.zeros(0, dtype=np.int64)
    rows = np.concatenate(bad)
    return np.unique(np.searchsorted(run.segment_starts, rows, side="right") - 1)


def _greater(left: WordArray, right: WordArray) -> np.ndarray:
    """Row-wise left > right in lexicographic (strcmp) order of big-endian words."""
    greater = np.zeros(left.shape[0], dtype=bool)
    equal = np.ones(left.shape[0], dtype=bool)
    for column in range(left.shape[1]):
        greater |= equal & (left[:, column] > right[:, column])
        equal &= left[:, column] == right[:, column]
    return greater


def _keys(query: IntArray, docs: WordArray, query_bits: int) -> np.ndarray:
    """Query index in the high bits, a hash of the document id in the rest.

    Keeping the query in the high bits makes the run's keys rise with its lines, so
    the binary searches below walk memory forward instead of jumping at random.
    """
    value = np.full(query.size, _MIX[0], dtype=np.uint64)
    for column in range(docs.shape[1]):
        mixed = (docs[:, column] ^ value) * _MIX[(column % 3) + 1]
        value = mixed ^ (mixed >> np.uint64(31))
    return (query.astype(np.uint64) << np.uint64(64 - query_bits)) | (
        value >> np.uint64(query_bits)
    )


def _match(
    judged_query: IntArray,
    judged_docs: WordArray,
    run: Columns,
    run_query_joined: IntArray,
    run_docs: WordArray,
) -> tuple[IntArray, IntArray]:
    """(run line, judgment) pairs naming the same query and document.

    ``run_query_joined`` maps the run's query indices to themselves, or -1 for
    queries without judgments; ``judged_query`` uses the same numbering. A document
    the run lists twice for one query is refused first (see
    :func:`reject_duplicate_results`); the usual path checks that on the same
    (query, id hash) keys it looks up, computed once per line.
    """
    empty = np.zeros(0, dtype=np.int64)
    query_bits = max(1, len(run_query_joined).bit_length())
    judged_keys = _keys(judged_query, judged_docs, query_bits)
    order = np.argsort(judged_keys, kind="stable")
    sorted_keys = judged_keys[order]
    if judged_query.size == 0 or bool((sorted_keys[1:] == sorted_keys[:-1]).any()):
        reject_duplicate_results(run)
        if judged_query.size == 0:
            return empty, empty
        return _match_exact(judged_query, judged_docs, run_query_joined[run.query_rows()], run_docs)
    table = _ProbeTable(sorted_keys, order)
    rows_found: list[IntArray] = []
    judgments_found: list[IntArray] = []
    for start, stop in _query_chunks(run):
        run_query = run.query_rows(start, stop)
        docs = run_docs[start:stop]
        line_keys = _keys(run_query, docs, query_bits)
        _reject_duplicates_in(run, run_query, docs, line_keys, start)
        query = run_query_joined[run_query]
        if bool((query >= 0).all()):  # the usual case: every query of the run is judged
            found_at, judgments = table.find(line_keys)
            rows = found_at
        else:
            wanted = np.flatnonzero(query >= 0)
            found_at, judgments = table.find(line_keys[wanted])
            rows = wanted[found_at]
        if judgments.size == 0:
            continue
        same_query = judged_query[judgments] == query[rows]
        exact = same_query & (judged_docs[judgments] == docs[rows]).all(axis=1)
        rows_found.append(rows[exact] + start)
        judgments_found.append(judgments[exact])
    if not rows_found:
        return empty, empty
    return np.concatenate(rows_found), np.concatenate(judgments_found)


class _ProbeTable:
    """Sorted keys plus a bucket directory on their high bits: a lookup is two small gathers.

    Bucket b holds the keys whose top ``bits`` bits equal b, at
    ``keys[directory[b]:directory[b + 1]]`` (the keys are sorted, so buckets are
    contiguous). With under one key per two buckets most lookups read a single
    candidate; fuller buckets are walked in a few vectorised rounds. The query
    index sits in the keys' high bits, so one chunk of run lines touches one small
    stretch of the directory.
    """

    def __init__(self, sorted_keys: np.ndarray, values: IntArray) -> None:
        bits = max(4, (2 * sorted_keys.size).bit_length())
        self._shift = np.uint64(64 - bits)
        bucket = (sorted_keys >> self._shift).astype(np.int64)
        self._directory = np.zeros((1 << bits) + 1, dtype=np.int64)
        np.cumsum(np.bincount(bucket, minlength=1 << bits), out=self._directory[1:])
        self._keys = sorted_keys
        self._values = values

    def find(self, keys: np.ndarray) -> tuple[IntArray, IntArray]:
        """(positions in ``keys`` that are present, their values)."""
        bucket = (keys >> self._shift).astype(np.int64)
        candidate = self._directory[bucket]
        remaining = self._directory[bucket + 1] - candidate
        active = np.flatnonzero(remaining > 0)
        candidate, remaining = candidate[active], remaining[active]
        found_positions: list[IntArray] = []
        found_values: list[IntArray] = []
        while active.size:
            hit = self._keys[candidate] == keys[active]
            if bool(hit.any()):
                found_positions.append(active[hit])
                found_values.append(self._values[candidate[hit]])
            more = ~hit & (remaining > 1)
            active, candidate, remaining = active[more], candidate[more] + 1, remaining[more] - 1
        if not found_positions:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        return np.concatenate(found_positions), np.concatenate(found_values)


def _match_exact(
    judged_query: IntArray, judged_docs: WordArray, run_query: IntArray, run_docs: WordArray
) -> tuple[IntArray, IntArray]:
    """Collision-free matching through a Python dictionary, for the rare key clash.

    Also the place where a document judged twice for one query is caught: its two
    judgments are the only way to get equal keys without a hash collision.
    """
    table: dict[tuple[int, bytes], int] = {}
    for index, (query, docs) in enumerate(zip(judged_query.tolist(), judged_docs, strict=True)):
        if table.setdefault((query, docs.tobytes()), index) != index:
            raise _DuplicateJudgmentError(index)
    rows: list[int] = []
    judgments: list[int] = []
    for row in np.flatnonzero(run_query >= 0).tolist():
        judgment = table.get((int(run_query[row]), run_docs[row].tobytes()))
        if judgment is not None:
            rows.append(row)
            judgments.append(judgment)
    return np.asarray(rows, dtype=np.int64), np.asarray(judgments, dtype=np.int64)


def _doc_text(words: WordArray) -> str:
    raw: bytes = as_bytes_strings(words[None, :] if words.ndim == 1 else words)[0]
    return raw.decode("utf-8", "replace")


class _DuplicateJudgmentError(Exception):
    def __init__(self, second: int) -> None:
        super().__init__(second)
        self.second = second


def _reject_duplicate_judgment(qrels: Columns, docs: WordArray, second: int) -> NoReturn:
    """trec_eval refuses a qrels file that judges one document twice for an evaluated query."""
    qid = qrels.query_ids[int(qrels.query_of(np.array([second]))[0])]
    raise InputError(
        f"document {_doc_text(docs[second])!r} is judged twice for query {qid!r}; keep one line",
        file=qrels.path,
        line=qrels.line_of(second),
    )


def reject_duplicate_results(run: Columns) -> None:
    """trec_eval refuses a run that lists one document twice for a query; so do we.

    Each chunk of whole queries is checked on its (query, id hash) keys; where a key
    repeats, a few rounds of scattering the keys into a small table find the pairs: a
    key that finds an equal key in its slot is a duplicate candidate (confirmed on the
    exact id bytes), a key that finds a different one tries again with another hash.
    """
    query_bits = max(1, len(run.query_ids).bit_length())
    for start, stop in _query_chunks(run):
        query = run.query_rows(start, stop)
        docs = run.doc_words[start:stop]
        _reject_duplicates_in(run, query, docs, _keys(query, docs, query_bits), start)


def _reject_duplicates_in(
    run: Columns, query: IntArray, docs: WordArray, keys: np.ndarray, start: int
) -> None:
    """The duplicate check of whole queries' lines ``start:start + len(keys)``.

    Sorting a chunk's keys (numpy's vectorised sort) and comparing neighbours is the
    cheap test that no key repeats; only a chunk with a repeated key is searched for
    the pairs.
    """
    ordered = np.sort(keys)
    if not bool((ordered[1:] == ordered[:-1]).any()):
        return
    pairs = _equal_key_pairs(keys)
    if pairs.size == 0:  # pragma: no cover - the sort and the table agree
        return
    same = (docs[pairs[:, 0]] == docs[pairs[:, 1]]).all(axis=1)
    found: list[tuple[int, int]]
    if bool(same.all()):
        found = [(int(a) + start, int(b) + start) for a, b in pairs[same].tolist()]
    else:  # a 64-bit hash collision: settle this chunk exactly
        found = _exact_duplicates(query, docs, start)
    if not found:
        return
    later = [max(run.line_of(a), run.line_of(b)) for a, b in found]
    pick = int(np.argmin(later))
    row = found[pick][0]
    qid = run.query_ids[int(run.query_of(np.array([row]))[0])]
    raise InputError(
        f"document {_doc_text(run.doc_words[row])!r} appears twice for query {qid!r}; "
        "list each document once per query",
        file=run.path,
        line=later[pick],
    )


def _query_chunks(run: Columns) -> list[tuple[int, int]]:
    """About CHUNK_ROWS lines at a time, never splitting a query (the run is contiguous)."""
    starts = run.segment_starts
    cuts = starts[np.unique(np.searchsorted(starts, np.arange(0, run.rows, CHUNK_ROWS)))]
    bounds = np.append(np.unique(cuts), run.rows).tolist()
    return list(pairwise(bounds))


def _equal_key_pairs(keys: np.ndarray) -> IntArray:
    """(i, j) pairs with keys[i] == keys[j]; every repeated key is in one pair at least."""
    bits = max(4, (2 * keys.size).bit_length())
    shift = np.uint64(64 - bits)
    table = np.empty(1 << bits, dtype=np.int64)
    active = np.arange(keys.size, dtype=np.int64)
    found: list[IntArray] = []
    for round_number in range(64):
        if active.size < 2:
            break
        mix = _MIX[round_number % 4] + np.uint64(2 * round_number)
        slot = ((keys[active] * mix) >> shift).astype(np.int64)
        table[slot] = active
        winner = table[slot]
        lost = winner != active
        if not bool(lost.any()):
            break
        equal = lost & (keys[winner] == keys[active])
        if bool(equal.any()):
            found.append(np.stack([winner[equal], active[equal]], axis=1))
        # Winners and equal-key losers are settled; losers to a different key go again.
        active = active[lost & ~equal]
    else:  # pragma: no cover - 64 rounds of collisions do not happen with these hashes
        raise AssertionError("duplicate check did not converge")
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    return np.concatenate(found)


def _exact_duplicates(query: IntArray, docs: WordArray, start: int) -> list[tuple[int, int]]:
    seen: dict[tuple[int, bytes], int] = {}
    pairs: list[tuple[int, int]] = []
    for index, (code, words) in enumerate(zip(query.tolist(), docs, strict=True)):
        first = seen.setdefault((code, words.tobytes()), index)
        if first != index:
            pairs.append((first + start, index + start))
    return pairs


class JudgmentsByQuery:
    """The qrels indexed once by query id, so each piece of a streamed run is joined with
    just its own queries' judgments (the whole qrels per piece would be quadratic)."""

    def __init__(self, qrels: Columns) -> None:
        assert qrels.query_words is not None
        self._qrels = qrels
        ids = as_bytes_strings(qrels.query_words)  # numpy orders S strings as strcmp does
        self._by_id = np.argsort(ids, kind="stable").astype(np.int64)
        self._ordered = ids[self._by_id]
        query = qrels.query_rows()
        self._rows = np.argsort(query, kind="stable")  # grouped by query, file order within
        self._counts = np.bincount(query, minlength=len(qrels.query_ids)).astype(np.int64)
        self._first = np.zeros(self._counts.size, dtype=np.int64)
        np.cumsum(self._counts[:-1], out=self._first[1:])

    def query_id(self, positions: IntArray) -> Sequence[str]:
        """Query ids at ``positions`` of the strcmp order of all qrels queries."""
        return take_ids(self._qrels.query_ids, self._by_id[positions])

    def for_run(self, run: Columns) -> tuple[Columns, IntArray]:
        """(qrels of the queries ``run`` shares with them, numbered in strcmp order; the
        position of each of those queries in the strcmp order of all qrels queries)."""
        assert run.query_words is not None
        run_ids = as_bytes_strings(run.query_words)
        # An id wider than every qrels id is truncated for the search but compared whole.
        at = np.minimum(np.searchsorted(self._ordered, run_ids), self._ordered.size - 1)
        positions = np.unique(at[self._ordered[at] == run_ids])
        queries = self._by_id[positions]
        counts = self._counts[queries]
        starts = np.zeros(queries.size, dtype=np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        offsets = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)
        rows = self._rows[np.repeat(self._first[queries], counts) + offsets]
        qrels = self._qrels
        assert qrels.query_words is not None
        judgments = Columns(
            path=qrels.path,
            query_ids=take_ids(qrels.query_ids, queries),
            segment_starts=starts,
            segment_codes=np.arange(queries.size, dtype=np.int64),
            doc_words=qrels.doc_words[rows],
            value=np.asarray(qrels.value)[rows],
            lines=LineMap((0,), (1,), (None,)),
            query_words=qrels.query_words[queries],
        )
        return judgments, positions
