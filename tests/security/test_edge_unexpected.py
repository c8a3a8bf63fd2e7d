"""Threat: input or a machine fault that no stage expected. Every run still ends with a
verdict: exit 2 (never 1, which reads as a regression), an ``error`` status with a
one-line reason, the job summary and ``verdict=error``; a traceback only when the
run is re-run with debug logging (``RUNNER_DEBUG=1``).
"""

from __future__ import annotations

import json
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.entry import ActionRun, World, run_cli, world_in


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


def _fixture(query_json: str) -> str:
    """A dataset line whose query is given as raw JSON text (to hold escapes json.dumps won't)."""
    return (
        '{"query_id": "k-099", "query": ' + query_json + ', "retrieval_type": "keyword", '
        '"expected_top_k_ids": ["recipes/risotto"], "ground_truth_source": "human-annotated"}\n'
    )


def _add_fixture_line(world: World, line: str) -> str:
    dataset = world.workspace / "datasets" / "keyword.jsonl"
    return world.commit({"datasets/keyword.jsonl": dataset.read_text() + line}, "one more")


def _assert_reported_error(world: World, run: ActionRun, sha: str, reason: str) -> None:
    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    status = world.github.statuses_for(sha)[-1]
    assert status["state"] == "error"
    assert reason in status["description"] and "\n" not in status["description"]
    assert reason in run.summary
    assert "Traceback" not in run.log


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ('"\\ud800 broken"', "contains a lone surrogate \\ud800"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
    ids=["lone-surrogate", "nested-100k-deep"],
)
def test_hostile_json_in_a_dataset_is_a_located_problem_not_a_crash(
    world: World, query: str, message: str
) -> None:
    base = world.head()
    head = _add_fixture_line(world, _fixture(query))

    run = world.pull_request(7, base, head)
    cli = run_cli(world.workspace, "run")

    assert run.returncode == 1, run.log  # invalid datasets: the PR must fix them
    assert run.outputs["verdict"] == "invalid"
    [status] = world.github.statuses_for(head)
    assert status["state"] == "failure" and message in status["description"]
    [annotation] = [
        line
        for line in run.stdout.splitlines()
        if line.startswith("::error file=datasets/keyword.jsonl,line=7::")
    ]
    assert message in annotation
    assert "Traceback" not in run.log
    assert cli.returncode == 1, cli.log
    [problem] = [line for line in cli.stderr.splitlines() if line.startswith("datasets/")]
    assert problem.startswith("datasets/keyword.jsonl:7: ") and message in problem
    assert "Traceback" not in cli.log


def _small_files_only() -> None:
    """No file may grow past 3 KB: the report files hit the limit, the short error summary
    does not. The kernel answers EFBIG, the same OSError path a full disk's ENOSPC takes."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (3_000, 3_000))


def test_a_disk_that_cannot_take_the_report_is_an_error_status_not_a_crash(world: World) -> None:
    sha = world.head()

    run = world.push(sha, preexec_fn=_small_files_only)

    _assert_reported_error(world, run, sha, "report.json")  # which file (the status is short)
    assert "retrieval-eval-report/report.json: could not write: File too large" in run.summary
    assert not (world.workspace / "baseline.json").exists()  # nothing half-written


# Some libraries' exceptions derive from BaseException (gevent's Timeout, trio's Cancelled):
# nothing below the edge expects one. No input can raise one in retrieval-eval's process on
# purpose (the user's factory runs in a child), so the fault is injected into the console
# script itself, through a sitecustomize module on PYTHONPATH.
SITECUSTOMIZE_CANCELLED = """\
import sys

if sys.argv and sys.argv[0].endswith("retrieval-eval"):
    import retrieval_eval.usecases.evaluate

    class Cancelled(BaseException):
        pass

    def _cancelled(*args, **kwargs):
        raise Cancelled("the event loop was cancelled")

    retrieval_eval.usecases.evaluate.run_evaluation = _cancelled
"""


def _use_factory_module(world: World, name: str, source: str) -> str:
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    config += '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n'
    config += f'[retrievers.custom]\npython = "{name}:make"\n'
    return world.commit({f"{name}.py": source, "retrieval-eval.toml": config}, name)


def test_an_exception_nothing_expects_is_an_error_status_with_the_traceback_only_in_debug(
    world: World, tmp_path: Path
) -> None:
    fault = tmp_path / "fault"
    fault.mkdir()
    (fault / "sitecustomize.py").write_text(SITECUSTOMIZE_CANCELLED, encoding="utf-8")
    sha = world.head()

    quiet = world.push(sha, extra_env={"PYTHONPATH": str(fault)})
    debug = world.push(sha, extra_env={"PYTHONPATH": str(fault), "RUNNER_DEBUG": "1"})

    _assert_reported_error(world, quiet, sha, "unexpected Cancelled")
    assert "Traceback (most recent call last)" not in quiet.log
    assert debug.returncode == 2, debug.log
    assert "Traceback (most recent call last)" in debug.log
    assert [s["state"] for s in world.github.statuses_for(sha)] == ["error", "error"]


FACTORY_CANCELLED = """\
class Cancelled(BaseException):
    pass

def make():
    raise Cancelled("the event loop was cancelled")
"""


def test_a_factory_raising_a_base_exception_is_an_error_naming_it(world: World) -> None:
    sha = _use_factory_module(world, "cancelled", FACTORY_CANCELLED)

    run = world.push(sha)

    _assert_reported_error(world, run, sha, "the factory raised Cancelled")
    assert "the event loop was cancelled" in run.summary


def test_a_full_disk_under_the_command_line_is_exit_2_in_one_line(world: World) -> None:
    run = run_cli(world.workspace, "run", preexec_fn=_small_files_only)

    assert run.returncode == 2, run.log
    [error] = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert "report.json: could not write: File too large" in error
    assert "Traceback" not in run.log


FACTORY_EXITS = """\
import sys

def make():
    sys.exit(0)
"""


def test_a_factory_that_calls_sys_exit_0_cannot_end_the_action_silently(world: World) -> None:
    sha = _use_factory_module(world, "quitter", FACTORY_EXITS)

    run = world.push(sha)

    _assert_reported_error(world, run, sha, "sys.exit(0)")
    assert json.loads(run.outputs["metrics"]) == {}


def test_a_configuration_no_path_can_hold_is_an_error_status_not_a_silent_exit(
    world: World,
) -> None:
    """A NUL in a path: the file system refuses it before any check of ours saw it. The
    run stopped with no status at all, so a required check waited for ever."""
    base = world.head()
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    head = world.commit({"retrieval-eval.toml": 'datasets = "data\\u0000sets"\n' + config})

    run = world.pull_request(11, base, head)

    _assert_reported_error(world, run, head, "bad value for 'datasets'")
    assert "unexpected" not in run.log
