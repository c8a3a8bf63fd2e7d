"""The whole evaluation's time bound stops a blocking wait and names the step it was in."""

from __future__ import annotations

import os
import select

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
