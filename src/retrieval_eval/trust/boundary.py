"""Who runs the pull request's code: a user of its own, never the Action's.

Every process that runs code from the repository under review (a command
retriever or reranker, the Python process a factory runs in) is started by
``ChildProcess`` with ``spawn_options()``. When this process is root, as the
Action always is in its container, those options drop the child to the
dedicated unprivileged user ``CHILD_USER`` the image creates, with no
supplementary group and a HOME and TMPDIR of its own, made fresh for the run
and removed when it ends. That user owns nothing else: it cannot write the
installed product, its libraries or the model files (root's), the workspace
(the runner's user's) or anything the run writes there, cannot read or signal
this process (another user's, and not dumpable), and finds the folders of the
runner's file-command files closed to it (``hide_folders``: their group and
other permission bits are taken away while the run lasts, and given back at
its end; the runner, their owner, keeps its own).

What happens where the drop is impossible is decided once, here:

- not root (a local run, a job step as the runner's user): children run as this
  process's user, as before; nothing changes;
- root in the image (``IMAGE_MARKER`` exists) without the user: no child starts
  (``BoundaryError``), so the pull request's code never runs as root there;
- root outside the image without the user: children run as root, with a warning
  on stderr that names the user to create.

``establish`` decides at the edge; the first child creates the HOME and TMPDIR.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval_eval.errors import RetrievalEvalError

# The user the image creates for the pull request's code (Dockerfile): a system user with
# a group of its own, no home and no shell. Its number is outside both Debian's ranges for
# system and ordinary users, and is not GitHub's runner user (1001).
CHILD_USER = "retrieval-eval-pr"
CHILD_UID = 64101
# The runner's user on GitHub-hosted runners; the boundary user must never be it.
RUNNER_UID = 1001
# Written into the image, never into a host: where it exists, a missing user is fatal.
IMAGE_MARKER = Path("/etc/retrieval-eval/boundary")


class BoundaryError(RetrievalEvalError):
    """The pull request's code may not run here as it would (as root, in the image)."""


@dataclass(frozen=True)
class Decision:
    """``uid``/``gid`` to drop to, or None (children run as this process's user)."""

    uid: int | None
    gid: int | None
    refusal: str | None = None  # set: no child may start
    warning: str | None = None  # set: said once, when the first child starts


def decide(
    *,
    euid: int,
    user: str = CHILD_USER,
    marker: Path = IMAGE_MARKER,
    lookup: Callable[[str], pwd.struct_passwd] = pwd.getpwnam,
) -> Decision:
    """The boundary for a process running as ``euid`` (the rules in the module docstring)."""
    if euid != 0:
        return Decision(None, None)
    try:
        entry = lookup(user)
    except KeyError:
        if marker.exists():
            return Decision(
                None,
                None,
                refusal=(
                    f"the image has no user `{user}` to run the pull request's code as; "
                    "refusing to run it as root"
                ),
            )
        return Decision(
            None,
            None,
            warning=(
                f"warning: the retriever's code runs as root: there is no user `{user}` to "
                "run it as (create one, with no login and a group of its own, to keep it "
                "from writing this installation and reading this process)"
            ),
        )
    if entry.pw_uid in (0, RUNNER_UID) or entry.pw_gid == 0:
        return Decision(
            None,
            None,
            refusal=(
                f"user `{user}` is uid {entry.pw_uid}, gid {entry.pw_gid}: "
                "not an unprivileged user of its own"
            ),
        )
    return Decision(entry.pw_uid, entry.pw_gid)


class Boundary:
    """A ``Decision`` put to work: the options each child starts with, the child's own
    folders (made by the first child, removed by ``end``), the runner's folders closed."""

    def __init__(self, decision: Decision, hidden: Iterable[Path]) -> None:
        self.decision = decision
        self._hidden = tuple(hidden)
        self._scratch: Path | None = None
        self._restore: list[tuple[Path, int]] = []
        self._warned = False
        self._lock = threading.Lock()  # retrievers may start from more than one thread

    def spawn_options(self) -> dict[str, Any]:
        """Keyword arguments for ``subprocess.Popen`` of a child running the PR's code."""
        decision = self.decision
        if decision.refusal:
            raise BoundaryError(decision.refusal)
        if decision.warning and not self._warned:
            self._warned = True
            print(decision.warning, file=sys.stderr, flush=True)
        env = dict(os.environ)  # the edge has taken the secrets and the runner's paths out
        if decision.uid is None or decision.gid is None:
            return {"env": env}
        home, tmp = self._own_folders(decision.uid, decision.gid)
        env.update(HOME=str(home), TMPDIR=str(tmp), TMP=str(tmp), TEMP=str(tmp))
        env.pop("XDG_CONFIG_HOME", None)
        env.pop("XDG_CACHE_HOME", None)
        return {
            "env": env,
            "user": decision.uid,
            "group": decision.gid,
            "extra_groups": [],
            "umask": 0o077,
            "close_fds": True,
        }

    def _own_folders(self, uid: int, gid: int) -> tuple[Path, Path]:
        with self._lock:
            return self._made_folders(uid, gid)

    def _made_folders(self, uid: int, gid: int) -> tuple[Path, Path]:
        if self._scratch is None:
            self._close_folders()
            scratch = Path(tempfile.mkdtemp(prefix="retrieval-eval-pr-"))
            atexit.register(self.end)
            self._scratch = scratch
            scratch.chmod(0o711)  # the child may pass through to its own two folders only
            for name in ("home", "tmp"):
                folder = scratch / name
                folder.mkdir(mode=0o700)
                os.chown(folder, uid, gid)
        return self._scratch / "home", self._scratch / "tmp"

    def _close_folders(self) -> None:
        workspace = Path.cwd().resolve()
        for folder in self._hidden:
            try:
                if workspace.is_relative_to(folder.resolve()):
                    continue  # the child must still reach the workspace below it
                mode = stat.S_IMODE(folder.stat().st_mode)
                if mode & 0o077:
                    folder.chmod(mode & ~0o077)
                    self._restore.append((folder, mode))
            except OSError:
                continue  # not there (not mounted here), or not ours to change

    def end(self) -> None:
        """Remove the child's folders and give the runner's folders their modes back."""
        for folder, mode in self._restore:
            with contextlib.suppress(OSError):
                folder.chmod(mode)
        self._restore.clear()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


_current: Boundary | None = None


def establish(hidden: Iterable[Path] = ()) -> Decision:
    """Decide the boundary for this process (once; the edge calls it before any child).

    ``hidden``: the folders of the runner's file-command files and its temp folder, closed
    to the child's user when the first child starts.
    """
    global _current
    if _current is None:
        _current = Boundary(decide(euid=os.geteuid()), hidden)
    return _current.decision


def spawn_options() -> dict[str, Any]:
    """How to start a child that runs the pull request's code (decided by ``establish``)."""
    establish()
    assert _current is not None
    return _current.spawn_options()


def runner_folders(*, files: Iterable[str], folders: Iterable[str]) -> list[Path]:
    """What ``establish`` closes: the folders holding the runner's file-command ``files``,
    and ``folders`` themselves (the runner's temp folder, the Action's HOME)."""
    found: dict[Path, None] = {}
    for value in files:
        if value.strip():
            found[Path(value.strip()).parent] = None
    for value in folders:
        if value.strip():
            found[Path(value.strip())] = None
    return [folder for folder in found if folder != Path("/")]
