"""Nothing a retriever starts outlives it: this process adopts and ends every orphan.

A retriever (code from the pull request under review) runs in a process group of
its own, and stopping it kills that group. A process that leaves the group
(``setsid``) and is then orphaned by a double fork would escape that kill: it is
re-parented to init and could rewrite the report or the baseline after the run
wrote them. So, on Linux, this process becomes a *child subreaper*
(``PR_SET_CHILD_SUBREAPER``, prctl(2)): every orphan among its descendants is
re-parented to it instead of to init, where ``end_orphans`` finds it as a child
it did not start itself, stops and kills it with everything below it, and reaps it.
``end_orphans`` runs whenever a retriever is stopped, so before the run writes its
files. The caller names the children to leave alone: the retrievers still running,
and whatever was already its child when the retriever started (``children``). Only a
child in another session is swept: an escape needs ``setsid`` to leave the retriever's
process group for good, while every process this one starts itself (``git``, a retriever,
and in the tests the test's own processes) stays in its session, so a sweep that runs late
(a retriever's finalizer) can never kill one of them.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Collection

_PR_SET_CHILD_SUBREAPER = 36  # prctl(2)
# Each round ends one layer of a process tree (and what it forked meanwhile); a tree that
# keeps forking faster than it is killed is given up on after this many rounds.
_ROUNDS = 100

_subreaper: bool | None = None


def become_subreaper() -> bool:
    """Adopt the orphans among this process's descendants (Linux; once per process).

    False where this is not possible; ``end_orphans`` then does nothing.
    """
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            libc = ctypes.CDLL(None, use_errno=True)
            _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


def children() -> frozenset[int]:
    """This process's children now (none where there is no subreaper to sweep them)."""
    if not _subreaper:
        return frozenset()
    return frozenset(_children_by_parent().get(os.getpid(), ()))


def end_orphans(keep: Collection[int] = ()) -> None:
    """Kill and reap every child of this process not in ``keep``, and all their descendants.

    Only a subreaper's children include orphans it never started; elsewhere this does
    nothing. Each victim is stopped (SIGSTOP) before it is killed, parents first, so none
    forks again, and no parent can reap a child whose number is about to be signalled.
    """
    if not _subreaper:
        return
    me = os.getpid()
    session = os.getsid(0)
    spared = set(keep)
    for _ in range(_ROUNDS):
        tree, sessions = _process_table()
        roots = [
            pid
            for pid in tree.get(me, ())
            if pid not in spared and sessions.get(pid, session) != session
        ]
        if not roots:
            return
        victims = _descendants(roots, tree)
        killed: set[int] = set()
        for number in (signal.SIGSTOP, signal.SIGKILL):
            for pid in victims:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, number)
                    killed.add(pid)
        for pid in roots:
            if pid not in killed:
                spared.add(pid)  # not ours to signal (another user's): nothing more to do
                continue
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _descendants(roots: list[int], tree: dict[int, list[int]]) -> list[int]:
    """``roots`` and everything below them, parents before their children."""
    order: list[int] = []
    pending = list(roots)
    seen: set[int] = set()
    while pending:
        pid = pending.pop(0)
        if pid in seen:
            continue
        seen.add(pid)
        order.append(pid)
        pending.extend(tree.get(pid, ()))
    return order


def _children_by_parent() -> dict[int, list[int]]:
    return _process_table()[0]


def _process_table() -> tuple[dict[int, list[int]], dict[int, int]]:
    """Every process's children, and every process's session, from /proc/<pid>/stat (which
    any user may read)."""
    children: dict[int, list[int]] = {}
    sessions: dict[int, int] = {}
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as handle:
                    stat = handle.read()
            except OSError:
                continue  # it ended meanwhile
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) > 3:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
                sessions[int(entry.name)] = int(fields[3])
    return children, sessions
