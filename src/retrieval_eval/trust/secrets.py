"""What an edge does first: keep the secrets away from every child it will start.

``protect_process`` runs before any child can start: it takes the secrets out of
the environment children inherit, registers them for redaction, announces them to
the runner with ``::add-mask::``, makes stdout and stderr clean everything printed,
and closes this process to inspection by its children.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable, MutableMapping

from retrieval_eval.trust.child_env import withhold_secrets
from retrieval_eval.trust.redaction import announce_masks, guard_standard_streams

_PR_SET_DUMPABLE = 4  # prctl(2)


def protect_process(
    environ: MutableMapping[str, str] | None = None, patterns: Iterable[str] = ()
) -> dict[str, str]:
    """Withhold secrets from children (returning them to the caller), mask them everywhere."""
    env = os.environ if environ is None else environ
    taken = withhold_secrets(env, patterns)
    forbid_inspection()
    in_actions = env.get("GITHUB_ACTIONS") == "true"
    if in_actions:
        announce_masks()
    # Inside a workflow the runner reads our log for commands, whatever command we run.
    guard_standard_streams(defuse_commands=in_actions)
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
