"""The whole evaluation's time bound, and the step it was in when the bound passed.

A run is stopped from outside the code that is slow: a retriever that never answers, a
service that trickles, a judge that retries. ``time_limit`` arms a real-time timer; when it
fires, the step running then (``step``: each progress step names itself) ends with a
``TimeLimitError`` that names it, which the edges turn into an ``error`` verdict and status.
The timer is a signal, so it interrupts a blocking wait (``select()`` on a child's pipe,
a socket read) too. Signals reach only the main thread: elsewhere there is no bound.
Every use case arms it (usecases/time_bound.py); one that calls another (``baseline
update`` runs an evaluation) runs the inner one under the outer bound.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from retrieval_eval.errors import RetrievalEvalError

# The steps running now, outermost first.
_steps: list[str] = []
# Whether a bound is armed now. A bound inside it adds nothing (every use case arms the
# same setting, so the outer one, armed first, ends first), and disarming the timer on
# its way out would lift the outer one.
_armed = False


class TimeLimitError(RetrievalEvalError):
    """The evaluation took longer than its bound."""


@contextmanager
def step(name: str) -> Iterator[None]:
    """``name`` is the step running while the block runs (the innermost one is named)."""
    _steps.append(name)
    try:
        yield
    finally:
        _steps.pop()


def current_step() -> str | None:
    return _steps[-1] if _steps else None


@contextmanager
def time_limit(seconds: float, *, setting: str = "time_limit_s") -> Iterator[None]:
    """Raise ``TimeLimitError`` in the block once ``seconds`` have passed; inside another
    bound, the outer one governs."""
    global _armed
    if threading.current_thread() is not threading.main_thread() or _armed:
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        running = current_step()
        where = f"in the step '{running}'" if running else "before its first step"
        raise TimeLimitError(
            f"the evaluation took longer than {setting} ({seconds:g} s) and was stopped "
            f"{where}; make that step faster, or raise {setting} in the configuration (on a "
            "pull request, the base commit's is used)"
        )

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    _armed = True
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _armed = False
