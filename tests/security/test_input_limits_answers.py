"""Threat: a retriever's answers that are huge or name documents that do not exist.

An answer of two million hits is read keeping only the top ``k`` (the rest is
never held as objects), and hit ids that are not in the corpus are scored as
misses with one warning per dataset, not silently.
"""

from __future__ import annotations

import json
import resource
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from retrieval_eval.retrieval.answers import MAX_ANSWER_BYTES
from tests.security.entry import World, run_cli, world_in
from tests.support.services import SearchService, search_service


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


def _use_command(world: World, script: str) -> None:
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    config += (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f"command = {json.dumps([sys.executable, 'search.py'])}\ntimeout_s = 240\n"
    )
    world.commit({"search.py": script, "retrieval-eval.toml": config}, "my retriever")


# Answers with `count` filler hits (ids that do not exist, scores in no order) and the expected
# note last, with the best score. Only the first query gets a flood of `count`; the rest 30.
FLOOD = """\
import json, sys
from tests_expected import EXPECTED
COUNT = {count}
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "index":
        print(json.dumps({{"ok": True}}), flush=True)
        continue
    best = EXPECTED[request["query"]]
    parts = ['{{"id": "filler/%d", "score": %d.5}}' % (i, (i * 7919) % 1000) for i in range(COUNT)]
    parts.append('{{"id": "%s", "score": 5000}}' % best)
    COUNT = 30
    sys.stdout.write('{{"cost_usd": 0, "hits": [' + ", ".join(parts) + ']}}\\n')
    sys.stdout.flush()
"""


# The same flood in columns: every id, then every score, then every text, so the reader
# must pair three lists it cannot hold.
FLOOD_COLUMNS = """\
import json, sys
from tests_expected import EXPECTED
COUNT = {count}
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "index":
        print(json.dumps({{"ok": True}}), flush=True)
        continue
    ids = ['"filler/%d"' % i for i in range(COUNT)] + ['"%s"' % EXPECTED[request["query"]]]
    scores = ["%d.5" % ((i * 7919) % 1000) for i in range(COUNT)] + ["5000"]
    texts = ['"t"'] * (COUNT + 1)
    COUNT = 30
    sys.stdout.write(
        '{{"ids": [' + ", ".join(ids) + '], "scores": [' + ", ".join(scores)
        + '], "texts": [' + ", ".join(texts) + '], "cost_usd": 0}}\\n'
    )
    sys.stdout.flush()
"""


def _expected_module(world: World) -> None:
    from tests.action.project import FIXTURES

    expected = {query: doc for _, query, doc in FIXTURES}
    world.commit({"tests_expected.py": f"EXPECTED = {expected!r}\n"}, "expected answers")


@pytest.mark.parametrize(
    "flood",
    [FLOOD, pytest.param(FLOOD_COLUMNS, marks=pytest.mark.slow)],
    ids=["hit-objects", "columns"],
)
def test_two_million_hits_in_one_answer_are_cut_to_the_top_k_while_reading(
    world: World, flood: str
) -> None:
    _expected_module(world)
    _use_command(world, flood.format(count=2_000_000))

    run = run_cli(world.workspace, "run")

    assert run.returncode == 0, run.log
    report = json.loads((world.workspace / "retrieval-eval-report" / "report.json").read_text())
    [dataset] = report["datasets"]
    [mrr] = [row for row in dataset["rows"] if row["metric"] == "mrr@10"]
    assert mrr["current"] == 1.0  # the best-scored hit came last in a 2M-hit answer


def test_hits_naming_documents_not_in_the_corpus_are_reported_once_per_dataset(
    world: World,
) -> None:
    _expected_module(world)
    _use_command(world, FLOOD.format(count=30))

    run = run_cli(world.workspace, "run")

    assert run.returncode == 0, run.log
    [warning] = [line for line in run.stderr.splitlines() if "not in the corpus" in line]
    # 6 queries, each with its 9 best filler hits kept (k = 10): 54 hits, none a document.
    assert warning.startswith("warning: keyword.jsonl: 54 hits name documents not in the corpus")
    assert "filler/" in warning  # an example


ENDLESS_LINE = """\
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "index":
        print(json.dumps({"ok": True}), flush=True)
        continue
    chunk = '{"id": "x", "score": 1}, ' * 40_000
    sys.stdout.write('{"hits": [')
    while True:
        sys.stdout.write(chunk)
"""


def _memory_capped() -> None:
    """As the attack ran: a 1.5 GiB cap, so an unbounded read fails fast, not the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))


def test_an_answer_line_that_never_ends_fails_naming_the_retriever(world: World) -> None:
    _use_command(world, ENDLESS_LINE)

    run = run_cli(world.workspace, "run", preexec_fn=_memory_capped)

    assert run.returncode == 2, run.log
    assert "custom retriever `" in run.stderr and "search.py`" in run.stderr
    assert f"ran past {MAX_ANSWER_BYTES:,} bytes without ending its line" in run.stderr
    assert "MemoryError" not in run.log


def test_an_http_answer_that_never_ends_fails_naming_the_retriever(world: World) -> None:
    service = SearchService({}, faults=["endless"])
    with search_service(service) as url:
        config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
        config += (
            '\n[dataset_retrievers]\n"keyword.jsonl" = "http"\n\n[retrievers.http]\n'
            f"url = {json.dumps(url)}\nretries = 0\n"
        )
        world.commit({"retrieval-eval.toml": config}, "my search service")

        run = run_cli(world.workspace, "run", preexec_fn=_memory_capped)

    assert run.returncode == 2, run.log
    assert url in run.stderr
    assert f"its answer ran past {MAX_ANSWER_BYTES:,} bytes" in run.stderr
    assert "MemoryError" not in run.log
