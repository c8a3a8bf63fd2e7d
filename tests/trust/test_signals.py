"""The runner's stop request becomes ``Stopped`` (reported as an ``error`` status) until
the verdict is on GitHub; after that it is only recorded. Each case runs in a process of
its own, which signals itself as the runner would."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROGRAM = """\
import os, signal, sys
from retrieval_eval.trust.signals import (
    CALLS_AFTER_STOP_S, Stopped, seconds_left_after_stop, stop_on_signals, verdict_delivered,
)
stop_on_signals()
print("before:", seconds_left_after_stop())
if sys.argv[1] == "delivered":
    verdict_delivered()
try:
    os.kill(os.getpid(), getattr(signal, sys.argv[2]))
    os.kill(os.getpid(), signal.SIGTERM)  # the runner's next request: ignored
    print("carried on")
except Stopped as stopped:
    print("stopped:", stopped.signal_name)
    os.kill(os.getpid(), signal.SIGTERM)  # the runner's next request, while reporting
    print("reported")
left = seconds_left_after_stop()
print("left:", 0 < left <= CALLS_AFTER_STOP_S)
sys.exit(0 if sys.argv[1] == "delivered" else 2)
"""


def run(state: str, signal_name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, state, signal_name],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_stop_before_the_verdict_unwinds_as_stopped(signal_name: str) -> None:
    done = run("running", signal_name)
    assert done.stdout.splitlines() == [
        "before: None",
        f"stopped: {signal_name}",
        "reported",
        "left: True",
    ]
    assert done.returncode == 2, done.stderr


def test_a_stop_after_the_verdict_is_only_recorded_and_the_run_exits_with_its_code() -> None:
    done = run("delivered", "SIGINT")
    assert done.stdout.splitlines() == ["before: None", "carried on", "left: True"]
    assert done.returncode == 0, done.stderr
