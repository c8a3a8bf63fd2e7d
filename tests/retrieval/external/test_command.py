"""Many queries per request: `search_many`, through `retrieval-eval run` on a scratch project.

A command retriever (tests/retrieval/external/batch_search.py) and a Python factory that take
many queries per request are sent `search_many` and nothing else; ones that do not
declare it get one `search` per query as before; the results are the same either way.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.retrieval.external.command import MAX_SEARCH_BATCH, SEARCH_BATCH, search_batch
from tests.action.git_repo import write
from tests.compare.noise_project import QUERIES, project_files
from tests.support.action import Run, run_cli

BATCH_SCRIPT = Path(__file__).with_name("batch_search.py")
# Six queries find their note first, the rest at rank 6 (noise_project's rankings).
RANKS: dict[int, int | None] = {i: 1 if i <= 6 else 6 for i in range(1, QUERIES + 1)}

FACTORY = """\
from pathlib import Path
from retrieval_eval.retrieval.base import Hit, SearchResult

ANSWERS = __import__("json").loads(Path("answers.json").read_text())

def _log(line):
    with Path("requests.log").open("a") as log:
        log.write(line + "\\n")

def _result(query, k):
    ids = ANSWERS.get(query, [])[:k]
    return SearchResult(hits=tuple(Hit(d, 1.0 / (i + 1), "") for i, d in enumerate(ids)))

class OneByOne:
    name = "one-by-one"
    def index(self, corpus):
        _log("index 0")
    def search(self, query, k, tags=()):
        _log("search 1")
        return _result(query, k)
    def describe(self):
        return {}

class Many(OneByOne):
    name = "many"
    def search_many(self, queries, k):
        _log(f"search_many {len(queries)}")
        return [_result(query, k) for query, tags in queries]

def one_by_one():
    return OneByOne()

def many():
    return Many()
"""


def _project(root: Path, retriever: str) -> None:
    files = project_files(RANKS)
    files["search.py"] = BATCH_SCRIPT.read_text(encoding="utf-8")
    files["batch_factory.py"] = FACTORY
    if retriever.startswith("python:"):
        config = files["retrieval-eval.toml"]
        command = f'command = [{json.dumps(sys.executable)}, "search.py"]'
        assert command in config
        spec = f"batch_factory:{retriever.removeprefix('python:')}"
        files["retrieval-eval.toml"] = config.replace(command, f"python = {json.dumps(spec)}")
    files[".gitignore"] += "requests.log\n"
    write(root, files)


def _run(root: Path) -> tuple[Run, dict[str, Any], list[tuple[str, int]]]:
    done = run_cli(root, "run", "--no-progress")
    report_file = root / "retrieval-eval-report" / "report.json"
    report = json.loads(report_file.read_text(encoding="utf-8")) if report_file.exists() else {}
    requests = []
    for line in (root / "requests.log").read_text(encoding="utf-8").splitlines():
        op, count = line.split()
        requests.append((op, int(count)))
    return done, report, requests


def _rankings(report: dict[str, Any]) -> dict[str, list[str]]:
    [dataset] = report["datasets"]
    return {q["query_id"]: q["retrieved"] for q in dataset["queries"]}


def _searches(requests: list[tuple[str, int]]) -> list[tuple[str, int]]:
    return [request for request in requests if request[0] != "index"]


def test_a_command_that_declares_batch_gets_search_many_and_the_same_results(
    tmp_path: Path,
) -> None:
    one, many = tmp_path / "one", tmp_path / "many"
    _project(one, "command")
    _project(many, "command")
    write(many, {"batch.json": "true"})
    done_one, report_one, requests_one = _run(one)
    done_many, report_many, requests_many = _run(many)
    assert done_one.returncode == 0, done_one.log
    assert done_many.returncode == 0, done_many.log
    # Without the declaration: one warm-up and one `search` per query, as before.
    assert _searches(requests_one) == [("search", 1)] * (QUERIES + 1)
    # With it: a one-query warm-up, then every query in one request (24 <= 64).
    assert _searches(requests_many) == [("search_many", 1), ("search_many", QUERIES)]
    assert _rankings(report_many) == _rankings(report_one)
    assert report_many["datasets"][0]["aggregates"] == report_one["datasets"][0]["aggregates"]
    # Each query of a batch is given the batch's time divided by its queries.
    [dataset] = report_many["datasets"]
    assert len({q["latency_ms"] for q in dataset["queries"]}) == 1


def test_a_number_bounds_the_queries_per_request(tmp_path: Path) -> None:
    _project(tmp_path, "command")
    write(tmp_path, {"batch.json": "10"})
    done, _, requests = _run(tmp_path)
    assert done.returncode == 0, done.log
    assert _searches(requests) == [("search_many", n) for n in (1, 10, 10, 4)]


def test_an_error_answer_inside_a_batch_stops_the_run_naming_the_command(tmp_path: Path) -> None:
    _project(tmp_path, "command")
    write(tmp_path, {"batch.json": "true", "fail.json": json.dumps({"at": 5})})
    done, _, _ = _run(tmp_path)
    assert done.returncode == 2, done.log
    assert "reported an error on `search_many`: shard 3 is down" in done.log


def test_a_bad_batch_declaration_is_an_error_saying_what_is_allowed(tmp_path: Path) -> None:
    _project(tmp_path, "command")
    write(tmp_path, {"batch.json": '"yes"'})
    done, _, _ = _run(tmp_path)
    assert done.returncode == 2, done.log
    assert "`batch` in the index answer must be true, false or a number of queries" in done.log


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        ("python:many", [("search_many", 1), ("search_many", QUERIES)]),
        ("python:one_by_one", [("search", 1)] * (QUERIES + 1)),
    ],
)
def test_a_python_factory_with_search_many_is_sent_batches(
    tmp_path: Path, factory: str, expected: list[tuple[str, int]]
) -> None:
    _project(tmp_path / "factory", factory)
    done, report, requests = _run(tmp_path / "factory")
    assert done.returncode == 0, done.log
    assert _searches(requests) == expected
    _project(tmp_path / "command", "command")
    _, by_command, _ = _run(tmp_path / "command")
    assert _rankings(report) == _rankings(by_command)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    )
)
def test_any_batch_value_is_a_size_none_or_a_clear_error(value: object) -> None:
    try:
        size = search_batch(value, "custom retriever `x`")
    except RetrievalEvalError as error:
        assert "`batch` in the index answer must be" in str(error)
        return
    if value is True:
        assert size == SEARCH_BATCH
    elif value is None or value is False:
        assert size is None
    else:
        assert size == value and 1 <= size <= MAX_SEARCH_BATCH


@pytest.mark.slow
def test_answers_in_columns_or_in_one_line_give_the_same_results(tmp_path: Path) -> None:
    _project(tmp_path / "objects", "command")
    _, by_objects, _ = _run(tmp_path / "objects")
    forms: list[tuple[dict[str, bool], str]] = [
        ({"columns": True}, "false"),  # one `search` per query, answered in columns
        ({"columns": True}, "true"),
        ({"one_line": True}, "true"),
        ({"columns": True, "one_line": True}, "true"),
    ]
    for n, (form, batch) in enumerate(forms):
        root = tmp_path / f"form{n}"
        _project(root, "command")
        write(root, {"form.json": json.dumps(form), "batch.json": batch})
        done, report, requests = _run(root)
        assert done.returncode == 0, (form, done.log)
        assert _rankings(report) == _rankings(by_objects), form
        assert report["datasets"][0]["aggregates"] == by_objects["datasets"][0]["aggregates"]
        if batch == "true":
            assert _searches(requests) == [("search_many", 1), ("search_many", QUERIES)]


def test_a_batch_line_of_many_hits_gives_each_query_its_best_k(tmp_path: Path) -> None:
    _project(tmp_path / "objects", "command")
    _, by_objects, _ = _run(tmp_path / "objects")
    root = tmp_path / "large"
    _project(root, "command")
    # 24 answers of 6,000 hits each: a 5 MB line, read streaming (past 4 MB), which takes
    # longer than the latency threshold allows on a busy machine.
    form = {"columns": True, "one_line": True, "filler": 6_000}
    config = (root / "retrieval-eval.toml").read_text(encoding="utf-8")
    assert config.rstrip().endswith('"p@5" = false')  # inside [thresholds]
    write(
        root,
        {
            "form.json": json.dumps(form),
            "batch.json": "true",
            "retrieval-eval.toml": config + '"latency_p95_ms" = false\n',
        },
    )
    done, report, _ = _run(root)
    assert done.returncode == 0, done.log
    real = {
        query: [doc for doc in retrieved if not doc.startswith("filler/")]
        for query, retrieved in _rankings(report).items()
    }
    assert real == _rankings(by_objects)
    assert report["datasets"][0]["aggregates"] == by_objects["datasets"][0]["aggregates"]


@pytest.mark.parametrize("one_line", [True, False], ids=["one-line", "line-per-query"])
def test_a_bad_score_in_a_batch_is_an_error_naming_the_retriever_and_the_query(
    tmp_path: Path, one_line: bool
) -> None:
    _project(tmp_path, "command")
    # The fifth query asked is the fourth of the batch after the one-query warm-up.
    form = {"columns": True, "one_line": one_line, "bad_score_at": 5}
    write(tmp_path, {"batch.json": "true", "form.json": json.dumps(form)})
    done, _, _ = _run(tmp_path)
    assert done.returncode == 2, done.log
    assert (
        f"error: custom retriever `{sys.executable} search.py`: answer 4 of {QUERIES} to "
        f"`search_many` (for query 'question number 04'): hit 0 (d04) has score 'high'; "
        "scores must be finite numbers"
    ) in done.log, done.log
    assert "unexpected" not in done.log
