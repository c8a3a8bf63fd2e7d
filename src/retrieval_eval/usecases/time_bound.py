"""The one place a use case's time bound is applied: ``time_limit_s`` over the whole of it.

Every use case that runs an evaluation or a part of one (one evaluation, the baseline
update, an embedding shard, an evaluate shard, the merge) is declared ``@bounded``, so
the CLI and the Action get the same bound whichever command or mode reaches it. When the
bound passes, ``deadline.TimeLimitError`` (naming ``time_limit_s`` and how to raise it)
ends the use case: one that returns an outcome turns it into an ``error`` outcome, the
others raise it, and each edge reports it as an error (exit 2, an ``error`` status).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from retrieval_eval.deadline import time_limit
from retrieval_eval.settings import RunSettings

P = ParamSpec("P")
R = TypeVar("R")


def bounded(
    use_case: Callable[Concatenate[RunSettings, P], R],
) -> Callable[Concatenate[RunSettings, P], R]:
    """``use_case`` run within its settings' ``time_limit_s``."""

    @functools.wraps(use_case)
    def within_time_limit(settings: RunSettings, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with time_limit(settings.time_limit_s):
            return use_case(settings, *args, **kwargs)

    return within_time_limit
