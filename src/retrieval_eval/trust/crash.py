"""What an edge does with an exception nothing else caught.

``unexpected_error`` turns it into the one-line error an edge reports (exit 2, an
``error`` status), so a crash never reads as a regression (exit 1) or leaves a
required check pending; ``format_traceback`` is what a debug run logs besides.
"""

from __future__ import annotations

import errno
import os
import traceback
from collections.abc import MutableMapping

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.trust.signals import Stopped

DEBUG_VARIABLE = "RUNNER_DEBUG"  # what GitHub sets when a run is re-run with debug logging


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
