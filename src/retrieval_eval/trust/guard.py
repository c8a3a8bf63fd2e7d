"""What the edges do first, and what they do with an exception nothing else caught.

``protect_process`` runs before any child can start: it takes the secrets out
of the environment children inherit, registers them for redaction, announces
them to the runner with ``::add-mask::``, makes stdout and stderr clean
everything printed, and closes this process to inspection by its children.
``unexpected_error`` turns any other exception into the one-line error an edge
reports (exit 2, an ``error`` status), so a crash never reads as a regression
(exit 1) or leaves a required check pending.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
import traceback
from collections.abc import Iterable, MutableMapping

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
