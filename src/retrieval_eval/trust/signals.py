"""The runner's stop request (a cancelled job, or one past its ``timeout-minutes``).

``stop_on_signals`` turns it into the exception ``Stopped``, so cleanup runs and the
run still ends with a status.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType


class Stopped(BaseException):
    """The process was asked to stop (SIGTERM or SIGINT) before it finished.

    A BaseException, like KeyboardInterrupt, so that no ``except Exception`` on the way
    swallows it; the edges' catch-alls turn it into an ``error`` verdict.
    """

    def __init__(self, signal_number: int) -> None:
        self.signal_name = signal.Signals(signal_number).name
        super().__init__(self.signal_name)


def stop_on_signals() -> None:
    """Raise ``Stopped`` in the main thread on the first SIGTERM or SIGINT.

    A GitHub runner stops a cancelled or timed-out step with SIGINT, then SIGTERM, then
    SIGKILL a few seconds later. Python's default for SIGTERM ends the process at once:
    no status (a required check would wait for ever), no summary, and a retriever command
    left running. As an exception, the stop unwinds through the cleanup (the retriever's
    process group is killed) to the edge, which reports it. Later signals are ignored, so
    reporting is not cut short by the SIGTERM that follows the SIGINT.
    """
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signal_number: int, frame: FrameType | None) -> None:
        for name in (signal.SIGTERM, signal.SIGINT):
            signal.signal(name, signal.SIG_IGN)
        raise Stopped(signal_number)

    for name in (signal.SIGTERM, signal.SIGINT):
        signal.signal(name, stop)
