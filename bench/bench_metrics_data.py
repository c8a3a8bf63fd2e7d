"""Deterministic synthetic TREC qrels/run files for bench_metrics.py.

The shape follows issue 3: graded qrels with 1-9 relevant documents per query
(plus a few judged non-relevant ones), 100 results per query written in rank
order, MS MARCO-like numeric ids, and score ties so tie-breaking is exercised.
Files are cached under .bench-data/ (git-ignored) keyed by size and seed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

COLLECTION_SIZE = 8_841_823  # MS MARCO passage count: realistic id widths
DRAWS_PER_QUERY = 130


def _distinct_ids(rng: np.random.Generator, rows: int, per_row: int) -> np.ndarray:
    """`rows` x `per_row` document numbers, distinct within each row."""
    ids = rng.integers(0, COLLECTION_SIZE, size=(rows, per_row), dtype=np.int64)
    while True:
        ordered = np.sort(ids, axis=1)
        bad = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if bad.size == 0:
            return ids
        ids[bad] = rng.integers(0, COLLECTION_SIZE, size=(bad.size, per_row), dtype=np.int64)


def generate(folder: Path, num_queries: int, depth: int = 100, seed: int = 42) -> tuple[Path, Path]:
    """Write (or reuse) qrels and run files; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    qrels_path = folder / f"qrels-{num_queries}-{depth}-{seed}.txt"
    run_path = folder / f"run-{num_queries}-{depth}-{seed}.txt"
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    batch = 10_000
    with (
        open(qrels_path.with_suffix(".tmp"), "w") as qrels_out,
        open(run_path.with_suffix(".tmp"), "w") as run_out,
    ):
        for start in range(0, num_queries, batch):
            rows = min(batch, num_queries - start)
            ids = _distinct_ids(rng, rows, depth + 20)
            num_relevant = rng.integers(1, 10, size=rows)
            num_judged_nonrel = rng.integers(0, 6, size=rows)
            grades = rng.integers(1, 4, size=(rows, 9))
            # Relevant docs are ids[:, depth:depth+9]; each is retrieved with p=0.6
            retrieved = rng.random((rows, 9)) < 0.6
            slots = rng.integers(0, depth, size=(rows, 9))
            # Scores fall with rank; about 5% of ranks repeat the score above them.
            steps = rng.random((rows, depth)) * 0.2 + 0.001
            steps[rng.random((rows, depth)) < 0.05] = 0.0
            steps[:, 0] = 0.0
            scores = np.round(30.0 - np.cumsum(steps, axis=1), 4)
            qrels_lines: list[str] = []
            run_lines: list[str] = []
            for row in range(rows):
                qid = str(start + row + 1)
                docs = [str(d) for d in ids[row]]
                ranked = docs[:depth]
                for j in range(int(num_relevant[row])):
                    relevant = docs[depth + j]
                    qrels_lines.append(f"{qid} 0 {relevant} {grades[row, j]}\n")
                    if retrieved[row, j]:
                        ranked[int(slots[row, j])] = relevant
                relevant_docs = set(docs[depth : depth + int(num_relevant[row])])
                for j in range(int(num_judged_nonrel[row])):
                    # judged non-relevant documents that the run did retrieve
                    judged = ranked[(j * 17 + 3) % depth]
                    if judged not in relevant_docs:
                        qrels_lines.append(f"{qid} 0 {judged} 0\n")
                # Write in trec_eval order: score descending, ties by docid descending.
                order = sorted(range(depth), key=lambda i: (-scores[row, i], ranked[i]))
                order = _ties_docid_descending(order, scores[row], ranked)
                for rank, i in enumerate(order, start=1):
                    run_lines.append(f"{qid} Q0 {ranked[i]} {rank} {scores[row, i]:.4f} bench\n")
            qrels_out.write("".join(dict.fromkeys(qrels_lines)))
            run_out.write("".join(run_lines))
    qrels_path.with_suffix(".tmp").replace(qrels_path)
    run_path.with_suffix(".tmp").replace(run_path)
    return qrels_path, run_path


def _ties_docid_descending(order: list[int], scores: np.ndarray, docs: list[str]) -> list[int]:
    return sorted(order, key=lambda i: (-scores[i], _Desc(docs[i])))


class _Desc:
    """Reverses string order inside a sort key (docid descending, as trec_eval breaks ties)."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


def shuffled(run_path: Path, seed: int = 7) -> Path:
    """The run's lines in a random order (as if concatenated from many shards), cached beside it."""
    out = run_path.with_name(run_path.stem + f"-shuffled{seed}.txt")
    if out.exists():
        return out
    data = np.fromfile(run_path, dtype=np.uint8)
    ends = np.flatnonzero(data == 10) + 1
    starts = np.concatenate([[0], ends[:-1]])
    order = np.random.default_rng(seed).permutation(ends.size)
    partial = out.with_suffix(".tmp")
    with open(partial, "wb") as handle:
        for chunk in range(0, order.size, 200_000):
            picked = order[chunk : chunk + 200_000]
            handle.write(b"".join(data[starts[i] : ends[i]].tobytes() for i in picked.tolist()))
    partial.replace(out)
    return out
