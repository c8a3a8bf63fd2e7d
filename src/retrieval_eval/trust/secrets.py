"""What an edge does first: keep the secrets away from every child it will start.

``protect_process`` runs before any child can start: it takes the secrets out of
the environment children inherit and erases them from the environment block this
process started with, registers them for redaction, announces them to the runner
with ``::add-mask::``, makes stdout and stderr clean everything printed, closes this
process to inspection by its children, and decides the user they run as
(``boundary``).
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable, Mapping, MutableMapping

from retrieval_eval.trust.boundary import establish, runner_folders
from retrieval_eval.trust.child_env import RUNNER_FILE_COMMANDS, withhold_secrets
from retrieval_eval.trust.redaction import announce_masks, guard_standard_streams

_PR_SET_DUMPABLE = 4  # prctl(2)


def protect_process(
    environ: MutableMapping[str, str] | None = None, patterns: Iterable[str] = ()
) -> dict[str, str]:
    """Withhold secrets from children (returning them to the caller), mask them everywhere."""
    env = os.environ if environ is None else environ
    home = env.get("HOME", "")
    taken = withhold_secrets(env, patterns)
    if env is os.environ:
        erase_startup_values(taken)
    forbid_inspection()
    establish(
        runner_folders(
            files=[taken.get(name, "") for name in RUNNER_FILE_COMMANDS],
            folders=[taken.get("RUNNER_TEMP", ""), home],
        )
    )
    in_actions = env.get("GITHUB_ACTIONS") == "true"
    if in_actions:
        announce_masks()
    # Inside a workflow the runner reads our log for commands, whatever command we run.
    guard_standard_streams(defuse_commands=in_actions)
    return taken


def erase_startup_values(taken: Mapping[str, str]) -> None:
    """Overwrite the ``NAME=value`` of each ``taken`` variable in the environment block this
    process started with (Linux).

    ``os.environ`` and ``unsetenv`` forget a variable, but its bytes stay where the kernel
    put them at exec, and ``/proc/<pid>/environ`` reads those bytes: whoever may read that
    file (this process itself, root) would still find the token there. Once withheld, no
    pointer leads to those bytes, so they are zeroed in place.
    """
    if not sys.platform.startswith("linux") or not taken:
        return
    try:
        with open("/proc/self/stat", "rb") as handle:
            stat = handle.read()
        with open("/proc/self/environ", "rb") as handle:
            block = handle.read()
        # After "pid (comm) ", field 3 (state) is the first; env_start is field 50 (proc(5)).
        env_start = int(stat[stat.rfind(b")") + 2 :].split()[47])
    except (OSError, ValueError, IndexError):
        return
    names = {name.encode("utf-8", "surrogateescape") for name in taken}
    offset = 0
    for entry in block.split(b"\0"):
        if entry.partition(b"=")[0] in names:
            ctypes.memset(env_start + offset, 0, len(entry))
        offset += len(entry) + 1


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
