"""Fixtures of the command tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def beir_folder(tmp_path: Path) -> Path:
    """A BEIR folder, `mini`: two documents, three queries (q3 judged not relevant by
    `test`), and a `dev` split judging q2 alone."""
    folder = tmp_path / "mini"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "Lemon", "text": "lemon tart"}\n'
        '{"_id": "d2", "title": "Rate", "text": "token bucket"}\n',
        encoding="utf-8",
    )
    (folder / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "lemon tart"}\n'
        '{"_id": "q2", "text": "token bucket"}\n'
        '{"_id": "q3", "text": "nothing"}\n',
        encoding="utf-8",
    )
    header = "query-id\tcorpus-id\tscore\n"
    (folder / "qrels" / "test.tsv").write_text(
        header + "q1\td1\t1\nq2\td2\t2\nq3\td1\t0\n", encoding="utf-8"
    )
    (folder / "qrels" / "dev.tsv").write_text(header + "q2\td2\t1\n", encoding="utf-8")
    return folder
