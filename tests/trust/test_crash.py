"""An exception nothing caught becomes one line the user can act on, never a traceback
read as a regression."""

from __future__ import annotations

import errno
import signal

from retrieval_eval.trust.crash import (
    UnexpectedError,
    debugging,
    format_traceback,
    unexpected_error,
)
from retrieval_eval.trust.signals import Stopped
from retrieval_eval.vocabulary import ExitCode


def test_a_full_disk_names_the_file_and_what_to_do() -> None:
    error = unexpected_error(OSError(errno.ENOSPC, "No space left on device", "out/report.json"))
    assert str(error) == (
        "out/report.json: could not write: No space left on device (free some disk space, "
        "or point report-dir/cache-dir at a volume with room)"
    )
    assert error.exit_code == ExitCode.ERROR


def test_another_machine_fault_is_its_message() -> None:
    assert str(unexpected_error(OSError(errno.EACCES, "Permission denied", "x.json"))) == (
        "x.json: Permission denied"
    )


def test_a_stop_says_the_job_was_cancelled_or_timed_out() -> None:
    assert str(unexpected_error(Stopped(signal.SIGTERM))) == (
        "the run was stopped (SIGTERM) before it finished: the job was cancelled, "
        "or ran past its timeout-minutes"
    )


def test_an_exit_request_from_code_it_ran_names_the_call() -> None:
    text = str(unexpected_error(SystemExit(3)))
    assert text.startswith("code run by retrieval-eval asked the process to exit (sys.exit(3))")
    assert str(unexpected_error(MemoryError())) == "ran out of memory"


def test_a_bug_is_one_line_cut_to_size_and_says_how_to_get_the_traceback() -> None:
    error = unexpected_error(RuntimeError("first line\n  second " + "x" * 400))
    assert isinstance(error, UnexpectedError)
    text = str(error)
    assert "\n" not in text
    assert text.startswith("unexpected RuntimeError: first line second xxx")
    assert "...(a bug" not in text and "... (a bug in retrieval-eval" in text
    assert text.endswith("set RUNNER_DEBUG=1 to log the traceback, and please report it)")


def test_debug_logging_is_the_runners_debug_switch() -> None:
    assert debugging({"RUNNER_DEBUG": "1"})
    assert not debugging({"RUNNER_DEBUG": "0"})
    assert not debugging({})


def test_the_traceback_names_the_exception_and_where_it_was_raised() -> None:
    try:
        raise ValueError("boom")
    except ValueError as error:
        text = format_traceback(error)
    assert text.startswith("Traceback (most recent call last):")
    assert "test_crash.py" in text and text.endswith("ValueError: boom\n")
