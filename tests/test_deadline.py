"""The whole evaluation's time bound stops a blocking wait and names the step it was in."""

from __future__ import annotations

import os
import select
import sys
from pathlib import Path

import pytest

from retrieval_eval.deadline import TimeLimitError, current_step, step, time_limit


def test_the_bound_interrupts_a_blocking_wait_and_names_the_innermost_step() -> None:
    read_end, write_end = os.pipe()  # nothing is ever written: select() would wait forever
    try:
        with (
            pytest.raises(TimeLimitError) as stopped,
            time_limit(0.05),
            step("indexing"),
            step("keyword.jsonl: searching with custom"),
        ):
            select.select([read_end], [], [])
    finally:
        os.close(read_end)
        os.close(write_end)
    assert "took longer than time_limit_s (0.05 s)" in stopped.value.message
    assert "in the step 'keyword.jsonl: searching with custom'" in stopped.value.message
    assert current_step() is None


def test_a_run_within_its_bound_leaves_no_timer_behind() -> None:
    with time_limit(60):
        pass
    import signal

    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_the_console_scripts_run_is_bounded_too(tmp_path: Path) -> None:
    """`retrieval-eval run` with a retriever that never answers ends at `time_limit_s`."""
    from tests.action.project import new_project
    from tests.support.action import run_cli

    new_project(tmp_path)
    (tmp_path / "silent.py").write_text("import sys\nsys.stdin.read()\n", encoding="utf-8")
    config = (tmp_path / "retrieval-eval.toml").read_text(encoding="utf-8")
    (tmp_path / "retrieval-eval.toml").write_text(
        "time_limit_s = 2\n"
        + config
        + '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        + f'command = ["{sys.executable}", "silent.py"]\n',
        encoding="utf-8",
    )
    done = run_cli(tmp_path, "run")
    assert done.returncode == 2, done.log
    assert "error: the evaluation took longer than time_limit_s (2 s)" in done.log
    assert "stopped in the step 'indexing for custom'" in done.log
