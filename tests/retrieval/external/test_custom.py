"""The user's own system: a real subprocess over JSON lines, and a Python factory."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.config import CustomConfig, RetrieversConfig
from retrieval_eval.retrieval.registry import build_retriever, close_retriever

SCRIPT = Path(__file__).with_name("own_search_process.py")


def _command(*flags: str, timeout_s: float = 30.0) -> RetrieversConfig:
    custom = CustomConfig(command=[sys.executable, str(SCRIPT), *flags], timeout_s=timeout_s)
    return RetrieversConfig(custom=custom)


def _label(*flags: str) -> str:
    return f"custom retriever `{' '.join([sys.executable, str(SCRIPT), *flags])}`"


def test_a_command_indexes_searches_and_reports_cost(notes: Corpus) -> None:
    retriever = build_retriever("custom", _command("--cost", "0.002"))
    try:
        retriever.index(notes)
        result = retriever.search("pesto lisbon trip", 10)
        filtered = retriever.search("pesto lisbon trip", 10, ["recipes"])
        described = retriever.describe()
    finally:
        close_retriever(retriever)
    # Re-ordered by score, ties by id, whatever order the process answered in.
    assert [(h.doc_id, h.score) for h in result.hits] == [
        ("journal/2024-05-02", 3.0),
        ("travel/lisbon", 2.0),
        ("recipes/pesto", 1.0),
    ]
    assert result.cost_usd == 0.002
    assert [h.doc_id for h in filtered.hits] == ["recipes/pesto"]
    assert described["ranking"] == "word overlap"


def test_closing_stops_the_process(notes: Corpus, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    retriever = build_retriever("custom", _command("--pid-file", str(pid_file)))
    retriever.index(notes)
    pid = int(pid_file.read_text())
    close_retriever(retriever)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (
            "--bad-json",
            "{label}: answer to `search` is not JSON (Expecting value): 'this is not json'",
        ),
        (
            "--no-hits",
            "{label}: answer to `search` for query 'pesto' lacks a `hits` list "
            '(or `ids` and `scores` lists): {{"results": []}}',
        ),
        ("--error", "{label} reported an error on `search`: quota exceeded"),
        (
            "--crash-on-search",
            "{label} exited with code 3 before answering `search`; "
            "stderr: boom: index file is corrupt",
        ),
    ],
    ids=["bad-json", "no-hits", "error", "crash"],
)
def test_protocol_failures_become_clear_errors(notes: Corpus, flag: str, message: str) -> None:
    retriever = build_retriever("custom", _command(flag))
    try:
        retriever.index(notes)
        with pytest.raises(RetrievalEvalError) as caught:
            retriever.search("pesto", 5)
    finally:
        close_retriever(retriever)
    assert str(caught.value) == message.format(label=_label(flag))


def test_a_process_that_never_answers_times_out(notes: Corpus) -> None:
    retriever = build_retriever("custom", _command("--silent", timeout_s=0.5))
    retriever.index(notes)
    with pytest.raises(RetrievalEvalError, match=r"did not answer `search` within 0\.5 s"):
        retriever.search("pesto", 5)
    close_retriever(retriever)


def test_a_command_that_cannot_start_is_reported(notes: Corpus, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-search"
    retriever = build_retriever(
        "custom", RetrieversConfig(custom=CustomConfig(command=[str(missing)]))
    )
    with pytest.raises(
        RetrievalEvalError, match=f"custom retriever `{missing}` could not be started"
    ):
        retriever.index(notes)


def test_a_python_factory_gets_its_options_and_is_checked(notes: Corpus) -> None:
    config = RetrieversConfig(
        custom=CustomConfig(python="tests.retrieval.own_retriever:make", options={"boost": 2.0})
    )
    retriever = build_retriever("custom", config)
    retriever.index(notes)
    result = retriever.search("lisbon trip journal", 1)
    assert [(h.doc_id, h.score) for h in result.hits] == [("travel/lisbon", 4.0)]
    assert result.cost_usd == 0.5
    assert retriever.name == "title-search"
    assert retriever.describe() == {
        "retriever": "custom",
        "python": "tests.retrieval.own_retriever:make",
        "boost": 2.0,
    }


def test_exceptions_in_the_users_retriever_name_it(notes: Corpus) -> None:
    config = RetrieversConfig(
        custom=CustomConfig(python="tests.retrieval.own_retriever:make", options={"broken": True})
    )
    retriever = build_retriever("custom", config)
    retriever.index(notes)
    with pytest.raises(RetrievalEvalError) as caught:
        retriever.search("x", 1)
    assert str(caught.value) == (
        "custom retriever tests.retrieval.own_retriever:make: search() raised KeyError: 'shard 3'"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tests.retrieval.no_such_module:make", "cannot import tests.retrieval.no_such_module"),
        ("tests.retrieval.own_retriever:missing", "has no callable missing"),
        ("tests.retrieval.own_retriever:not_a_retriever", "the factory returned object"),
    ],
)
def test_bad_factories_are_configuration_errors(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_retriever("custom", RetrieversConfig(custom=CustomConfig(python=spec)))
