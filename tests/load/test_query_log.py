"""Reading query logs: whatever a CSV or JSONL writer puts in a file reads back as written."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.load.query_log import CSV_ID_SEPARATOR, parse_query_log

queries = st.text(min_size=1).filter(lambda q: q.strip() != "")
doc_ids = st.text(min_size=1).filter(
    lambda d: d == d.strip() and d != "" and CSV_ID_SEPARATOR not in d
)
records = st.lists(
    st.tuples(
        queries,
        st.lists(doc_ids, max_size=4, unique=True),
        st.integers(min_value=1, max_value=10**9),
        st.text(),
    ),
    min_size=1,
    max_size=20,
)


@given(records)
def test_csv_reads_back_every_record_as_written(
    rows: list[tuple[str, list[str], int, str]],
) -> None:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(["query", "clicked", "count", "segment"])
    for query, clicked, count, segment in rows:
        writer.writerow([query, CSV_ID_SEPARATOR.join(clicked), count, segment])
    read = parse_query_log(buffer.getvalue(), "csv", Path("log.csv"))
    assert [(r.query, list(r.clicked), r.count, r.fields["segment"]) for r in read] == rows


@given(records)
def test_jsonl_reads_back_every_record_as_written(
    rows: list[tuple[str, list[str], int, str]],
) -> None:
    text = "".join(
        json.dumps({"query": q, "clicked": c, "count": n, "segment": s}, ensure_ascii=False) + "\n"
        for q, c, n, s in rows
    )
    read = parse_query_log(text, "jsonl", Path("log.jsonl"))
    assert [(r.query, list(r.clicked), r.count, r.fields["segment"]) for r in read] == rows
    assert [r.line for r in read] == list(range(1, len(rows) + 1))
