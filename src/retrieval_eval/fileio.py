"""Atomic writes: a crash or an error never leaves a half-written baseline or report.

The temporary file is created with mode 0666 and the process umask applied, as
``open()`` would create the file itself (``mkstemp`` would give 0600: the
container runs as root, and a later workflow step running as the runner user
could not read the baseline or the report).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.trust.redaction import clean_utf8, clean_utf8_bytes


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        break
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Text files are reports, baselines and hand-over files: secrets are masked first.
    A full disk (or any refusal to write) is an error naming the file, not a crash."""
    _write_or_fail(path, clean_utf8(text))


def atomic_write_utf8(path: Path, data: bytes) -> None:
    """``atomic_write_text`` of a text already encoded as UTF-8 (by a serializer that
    writes bytes): secrets are masked in the bytes."""
    _write_or_fail(path, clean_utf8_bytes(data))


def _write_or_fail(path: Path, data: bytes) -> None:
    try:
        atomic_write_bytes(path, data)
    except OSError as error:
        raise RetrievalEvalError(f"could not write: {error.strerror or error}", file=path) from None


def give_to_owner_of(root: Path, paths: Iterable[Path]) -> list[Path]:
    """Whatever this process owns of ``paths`` (folders with all they hold) and of the
    folders between ``root`` and them gets ``root``'s owner and group; returns what could
    not be changed.

    The Action's container runs as root, while on a self-hosted runner the job's later
    steps (and the next job's checkout, which cleans the workspace) run as the user who
    owns the workspace: a root-owned report folder, baseline, history or cache is then a
    file they cannot replace or remove. Only root can give a file away, so as any other
    user this does nothing; files someone else owns and paths outside ``root`` are left
    alone, and symbolic links are changed themselves, never followed.
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    try:
        owner = root.stat()
    except OSError:
        return []
    me = os.geteuid()
    if owner.st_uid == me:
        return []
    top = Path(os.path.abspath(root))
    seen: set[Path] = set()
    failed: list[Path] = []

    def give(path: Path) -> None:
        if path in seen:
            return
        seen.add(path)
        try:
            if os.lstat(path).st_uid == me:
                os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)
        except FileNotFoundError:
            pass
        except OSError:
            failed.append(path)

    for named in paths:
        path = Path(os.path.abspath(named))
        if path == top or not path.is_relative_to(top):
            continue
        for parent in reversed(path.relative_to(top).parents[:-1]):
            give(top / parent)
        give(path)
        if path.is_dir() and not path.is_symlink():
            for folder, dirs, files in os.walk(path):
                for name in (*dirs, *files):
                    give(Path(folder) / name)
    return failed
