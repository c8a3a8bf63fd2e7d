"""What the edges do first, and what they do with an exception nothing else caught.

``protect_process`` runs before any child can start: it takes the secrets out
of the environment children inherit, registers them for redaction, announces
them to the runner with ``::add-mask::``, makes stdout and stderr clean
everything printed, and closes this process to inspection by its children.
``unexpected_error`` turns any other exception into the one-line error an edge
reports (exit 2, an ``error`` status), so a crash never reads as a regression
(exit 1) or leaves a required check pending. ``stop_on_signals`` makes the
runner's stop request (a cancelled job, or one past its ``timeout-minutes``) such
an exception too, so cleanup runs and the run still ends with a status.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterable, MutableMapping
from types import FrameType

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.trust.child_env import withhold_secrets
from retrieval_eval.trust.redaction import announce_masks, guard_standard_streams

DEBUG_VARIABLE = "RUNNER_DEBUG"  # what GitHub sets when a run is re-run with debug logging
_PR_SET_DUMPABLE = 4  # prctl(2)


def protect_process(
    environ: MutableMapping[str, str] | None = None, patterns: Iterable[str] = ()
) -> dict[str, str]:
    """Withhold secrets from children (returning them to the caller), mask them everywhere."""
    env = os.environ if environ is None else environ
    taken = withhold_secrets(env, patterns)
    forbid_inspection()
    if env.get("GITHUB_ACTIONS") == "true":
        announce_masks()
    guard_standard_streams()
    return taken


def forbid_inspection() -> None:
    """Make /proc/<this pid>/environ and /mem unreadable to this process's children.

    Taking a secret out of ``os.environ`` does not erase it from the environment block the
    process started with, which a child running as the same user can read through
    /proc/<parent pid>/environ. A process that is not "dumpable" has those files owned by
    root and readable only with CAP_SYS_PTRACE, which a container (GitHub's included) does
    not grant by default. Children get the flag back when they exec, so core dumps and
    debuggers still work for them.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def debugging(environ: MutableMapping[str, str] | None = None) -> bool:
    return (os.environ if environ is None else environ).get(DEBUG_VARIABLE) == "1"


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


class UnexpectedError(RetrievalEvalError):
    """An exception no stage turned into an error of its own; the message is one line."""


def unexpected_error(error: BaseException) -> UnexpectedError:
    """Name what happened in one line: a machine fault, an exit request, or a bug."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        where = f"{error.filename}: " if error.filename else ""
        return UnexpectedError(
            f"{where}could not write: {error.strerror} (free some disk space, or point "
            "report-dir/cache-dir at a volume with room)"
        )
    if isinstance(error, OSError):
        where = f"{error.filename}: " if error.filename else ""
        return UnexpectedError(f"{where}{error.strerror or error}")
    if isinstance(error, Stopped):
        return UnexpectedError(
            f"the run was stopped ({error.signal_name}) before it finished: the job was "
            "cancelled, or ran past its timeout-minutes"
        )
    if isinstance(error, MemoryError):
        return UnexpectedError("ran out of memory")
    if isinstance(error, SystemExit):
        return UnexpectedError(
            f"code run by retrieval-eval asked the process to exit (sys.exit({error.code!r})), "
            "e.g. a retriever factory; the evaluation did not finish"
        )
    text = " ".join(str(error).split())
    if len(text) > 300:
        text = text[:297] + "..."
    return UnexpectedError(
        f"unexpected {type(error).__name__}: {text} (a bug in retrieval-eval or in code it "
        f"ran; set {DEBUG_VARIABLE}=1 to log the traceback, and please report it)"
    )


def format_traceback(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))
