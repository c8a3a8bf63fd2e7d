from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.load.beir import load_beir


def test_cranfield_loads_every_query_document_and_judgment(cranfield_beir: Path) -> None:
    data = load_beir(cranfield_beir, "test")

    assert len(data.queries) == 225
    # Two Cranfield abstracts (471, 995) are empty in the published data: skipped, not lost.
    assert len(data.corpus.documents) == 1398
    assert data.corpus.skipped_empty == ("471", "995")
    assert data.judgment_count() == 1612
    assert data.qrels["1"]["184"] == 3
    assert data.queries["1"].startswith("what similarity laws must be obeyed")


def _beir(tmp_path: Path, *, corpus: str, queries: str, qrels: str) -> Path:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text(queries, encoding="utf-8")
    (tmp_path / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return tmp_path


CORPUS = '{"_id": "d1", "title": "T", "text": "one"}\n{"_id": "d2", "text": "two", "extra": 1}\n'
QUERIES = '{"_id": "q1", "text": "first"}\n{"_id": "q2", "text": "unjudged"}\n'


def test_queries_are_limited_to_the_split_and_headerless_qrels_are_read(tmp_path: Path) -> None:
    data = load_beir(_beir(tmp_path, corpus=CORPUS, queries=QUERIES, qrels="q1\td2\t0\n"), "test")

    assert data.queries == {"q1": "first"}
    assert data.qrels == {"q1": {"d2": 0}}


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        (
            "query-id\tcorpus-id\tscore\nq9\td1\t1\n",
            "qrels/test.tsv:2: query id 'q9' is not in queries.jsonl",
        ),
        ("q1\tdX\t1\n", "qrels/test.tsv:1: corpus id 'dX' is not in corpus.jsonl"),
        ("q1\td1\t1\nq1\td1\t2\n", "qrels/test.tsv:2: query 'q1' judges document 'd1' twice"),
        (
            "q1\td1\n",
            "qrels/test.tsv:1: expected 3 tab-separated columns (query-id, corpus-id, score), "
            "got 2",
        ),
        ("q1\td1\t1\nq1\td2\thigh\n", "qrels/test.tsv:2: score 'high' is not an integer"),
        # A first line whose grade was not an integer was skipped as a header, silently.
        ("q1\td1\t1.0\nq1\td2\t1\n", "qrels/test.tsv:1: score '1.0' is not an integer"),
        # int() read these as 10 and 1.
        ("q1\td1\t1\nq1\td2\t1_0\n", "qrels/test.tsv:2: score '1_0' is not an integer"),
        ("q1\td1\t1\nq1\td2\t\u0661\n", "qrels/test.tsv:2: score '\u0661' is not an integer"),
        # Loaded, then "unexpected OverflowError" when scored.
        (
            "q1\td1\t1\nq1\td2\t99999999999999999999\n",
            "qrels/test.tsv:2: score '99999999999999999999' is out of range; "
            "grades must lie within ±9,223,372,036,854,775,807",
        ),
    ],
)
def test_bad_qrels_name_the_line(tmp_path: Path, qrels: str, message: str) -> None:
    folder = _beir(tmp_path, corpus=CORPUS, queries=QUERIES, qrels=qrels)
    with pytest.raises(InputError) as caught:
        load_beir(folder, "test")
    assert str(caught.value) == f"{folder}/{message}"


def test_missing_split_lists_the_available_ones(tmp_path: Path) -> None:
    folder = _beir(tmp_path, corpus=CORPUS, queries=QUERIES, qrels="q1\td1\t1\n")
    with pytest.raises(InputError) as caught:
        load_beir(folder, "dev")
    assert (
        str(caught.value)
        == f"{folder}/qrels/dev.tsv: no qrels for split 'dev' (available splits: test)"
    )


def test_duplicate_corpus_id_names_both_lines(tmp_path: Path) -> None:
    corpus = '{"_id": "d1", "text": "a"}\n{"_id": "d1", "text": "b"}\n'
    folder = _beir(tmp_path, corpus=corpus, queries=QUERIES, qrels="q1\td1\t1\n")
    with pytest.raises(InputError) as caught:
        load_beir(folder, "test")
    path = folder / "corpus.jsonl"
    assert str(caught.value) == (
        f"{path}:2: duplicate document id 'd1' (first defined at {path}:1); document ids must "
        "be unique"
    )


@pytest.mark.parametrize(
    "qrels",
    [
        # A blank line before the header: the header was only recognised on line 1, so this
        # failed with "qrels/test.tsv:2: score 'score' is not an integer".
        "\nquery-id\tcorpus-id\tscore\nq1\td1\t2\n",
        # A trailing tab made a fourth, empty column, read as the TREC layout: "score ''".
        "query-id\tcorpus-id\tscore\t\nq1\td1\t2\t\n",
    ],
)
def test_a_late_header_and_surrounding_whitespace_are_not_data(tmp_path: Path, qrels: str) -> None:
    data = load_beir(_beir(tmp_path, corpus=CORPUS, queries=QUERIES, qrels=qrels), "test")
    assert data.qrels == {"q1": {"d1": 2}}


_ID = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"), blacklist_characters="\x85"
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(
    judged=st.dictionaries(
        st.tuples(st.sampled_from(["q1", "q2", "7"]), _ID), st.integers(-3, 1000), min_size=1
    ),
    header=st.sampled_from(["", "query-id\tcorpus-id\tscore\n", "qid\tdocid\trel\n"]),
    trec_layout=st.booleans(),
    ending=st.sampled_from(["\n", "\r\n"]),
    padding=st.sampled_from(["", " ", "\t"]),
    blank=st.booleans(),
)
def test_qrels_lines_in_any_of_their_layouts_read_back_as_written(
    judged: dict[tuple[str, str], int],
    header: str,
    trec_layout: bool,
    ending: str,
    padding: str,
    blank: bool,
) -> None:
    documents = sorted({doc for _, doc in judged})
    corpus = "".join(json.dumps({"_id": doc, "text": "t"}) + "\n" for doc in documents)
    queries = "".join(json.dumps({"_id": q, "text": "t"}) + "\n" for q in ("q1", "q2", "7"))
    lines = [
        (f"{q}\t0\t{doc}\t{grade}" if trec_layout else f"{q}\t{doc}\t{grade}") + padding
        for (q, doc), grade in judged.items()
    ]
    text = ("\n" if blank else "") + header.replace("\n", ending) + ending.join(lines) + ending
    with tempfile.TemporaryDirectory() as folder:
        data = load_beir(_beir(Path(folder), corpus=corpus, queries=queries, qrels=text), "test")
    expected: dict[str, dict[str, int]] = {}
    for (q, doc), grade in judged.items():
        expected.setdefault(q, {})[doc] = grade
    assert data.qrels == expected
    assert set(data.queries) == set(expected)


def test_gzipped_corpus_and_queries_read_as_the_plain_files(tmp_path: Path) -> None:
    """BEIR's copies on the Hugging Face Hub ship corpus.jsonl.gz and queries.jsonl.gz; such a
    folder was "not a BEIR folder: corpus.jsonl is missing"."""
    (tmp_path / "plain").mkdir()
    (tmp_path / "zipped").mkdir()
    plain = _beir(tmp_path / "plain", corpus=CORPUS, queries=QUERIES, qrels="q1\td1\t1\n")
    zipped = _beir(tmp_path / "zipped", corpus=CORPUS, queries=QUERIES, qrels="q1\td1\t1\n")
    for name in ("corpus.jsonl", "queries.jsonl"):
        (zipped / f"{name}.gz").write_bytes(gzip.compress((zipped / name).read_bytes()))
        (zipped / name).unlink()
    want, got = load_beir(plain), load_beir(zipped)
    assert (got.queries, got.qrels) == (want.queries, want.qrels)
    assert [(d.id, d.title, d.text) for d in got.corpus.documents] == [
        (d.id, d.title, d.text) for d in want.corpus.documents
    ]


def test_a_truncated_gzip_names_the_line_it_broke_at(tmp_path: Path) -> None:
    corpus = "".join(json.dumps({"_id": f"d{i}", "text": f"x{i}" * 50}) + "\n" for i in range(200))
    folder = _beir(tmp_path, corpus=corpus, queries=QUERIES, qrels="q1\td1\t1\n")
    packed = gzip.compress((folder / "corpus.jsonl").read_bytes())
    (folder / "corpus.jsonl").unlink()
    (folder / "corpus.jsonl.gz").write_bytes(packed[: len(packed) // 2])
    done = subprocess.run(
        [str(Path(sys.executable).with_name("retrieval-eval")), "beir", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"error: {folder / 'corpus.jsonl.gz'}:")
    assert done.stderr.endswith(
        ": cannot read the file from here on: Compressed file ended before the "
        "end-of-stream marker was reached\n"
    )


@settings(max_examples=150, deadline=None)
@given(
    grade=st.one_of(
        st.integers(-(2**64), 2**64).map(str),
        st.integers(0, 99).map(lambda n: f"+{n}"),
        st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1),
    )
)
def test_a_grade_is_an_int64_in_ascii_digits_or_its_line_is_named(grade: str) -> None:
    qrels = f"q1\td1\t1\nq1\td2\t{grade}\n"
    with tempfile.TemporaryDirectory() as folder:
        path = _beir(Path(folder), corpus=CORPUS, queries=QUERIES, qrels=qrels)
        ascii_integer = grade.lstrip("+-").isascii() and grade.lstrip("+-").isdigit()
        if ascii_integer and grade[1:2] not in ("+", "-") and -(2**63) <= int(grade) < 2**63:
            assert load_beir(path).qrels == {"q1": {"d1": 1, "d2": int(grade)}}
            return
        with pytest.raises(InputError) as caught:
            load_beir(path)
        assert caught.value.line == 2


@pytest.mark.parametrize(
    ("corpus", "qrels", "message"),
    [
        (
            "\n",
            "q1\td1\t1\n",
            'corpus.jsonl: no documents in this file; a corpus file holds one {"_id", "title", '
            '"text"} object per line',
        ),
        (
            CORPUS,
            "query-id\tcorpus-id\tscore\n",
            "qrels/test.tsv: no judgments in this split; expected lines of query-id, corpus-id, "
            "score",
        ),
    ],
)
def test_an_empty_corpus_or_split_is_an_error(
    tmp_path: Path, corpus: str, qrels: str, message: str
) -> None:
    """An empty split once evaluated to a report of nothing ("latency p95 n/a (no queries)")
    with exit 0; an empty corpus.jsonl loaded as a corpus of nothing."""
    folder = _beir(tmp_path, corpus=corpus, queries=QUERIES, qrels=qrels)
    done = subprocess.run(
        [str(Path(sys.executable).with_name("retrieval-eval")), "beir", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {folder}/{message}\n")
