"""The runner's stop request (a cancelled job, or one past its ``timeout-minutes``).

``stop_on_signals`` turns it into the exception ``Stopped``, so cleanup runs and the
run still ends with a status. Once the verdict is on GitHub (``verdict_delivered``)
a stop no longer undoes it: it is only recorded, and the run finishes with the
verdict's exit code. Either way, what the run still asks GitHub after a stop must fit
in ``CALLS_AFTER_STOP_S`` (``seconds_left_after_stop``).
"""

from __future__ import annotations

import atexit
import signal
import threading
import time
from types import FrameType

# The runner sends SIGKILL 7.5 s after its SIGINT (2.5 s after the SIGTERM that follows):
# the error status must be tried, and given up on, well before that.
CALLS_AFTER_STOP_S = 5.0
_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class _State:
    stopped_at: float | None = None  # time.monotonic() of the first stop request
    delivered = False  # whether the verdict's status is on GitHub


_state = _State()


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
    reporting is not cut short by the SIGTERM that follows the SIGINT; so are signals that
    come while the interpreter shuts down, when Python would restore the default action
    and a finished run would die of the signal instead of exiting with its code.
    """
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signal_number: int, frame: FrameType | None) -> None:
        _ignore()
        _state.stopped_at = time.monotonic()
        if not _state.delivered:
            raise Stopped(signal_number)

    for name in _SIGNALS:
        signal.signal(name, stop)
    atexit.register(_ignore)


def verdict_delivered() -> None:
    """The verdict's status is on GitHub: from now on a stop only shortens what is left."""
    _state.delivered = True


def seconds_left_after_stop() -> float | None:
    """None until a stop was requested; then what is left of ``CALLS_AFTER_STOP_S``."""
    if _state.stopped_at is None:
        return None
    return max(0.0, _state.stopped_at + CALLS_AFTER_STOP_S - time.monotonic())


def _ignore() -> None:
    if threading.current_thread() is threading.main_thread():
        for name in _SIGNALS:
            signal.signal(name, signal.SIG_IGN)
