"""The sha256 of a model folder's files, remembered between runs in a stamp beside them.

Every run checks the embedding model against its pinned sha256 before using it; hashing
the 90 MB ``model.onnx`` cost a warm run about 0.07 CPU-second of its ~1. A stamp file in
the model folder records, for each file hashed, its sha256 together with the file's
``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` as ``fstat`` gave them on the
handle that was read. A later run trusts the recorded hash only when all five still match.

Why that is as safe a trust check as hashing every time:

- Any write to the file changes its ``st_mtime_ns`` and ``st_ctime_ns``, and a file put in
  its place (copied, moved, extracted, checked out) is another inode with a new ctime. The
  ctime cannot be set from user space (``utime`` sets it to *now*), so no tool can bring
  back the recorded one after a change: only a write within the same clock tick as the
  recorded stat could, and a file whose mtime or ctime is less than ``RACY_SECONDS`` old
  when it is hashed is never stamped (git's rule for "racily clean" index entries).
- The stamp lives outside any repository work tree: a model folder inside one (found by a
  ``.git`` in it or a parent) is hashed every time and gets no stamp, so no pull request,
  cache restore or checkout can bring one along. Even then it would have to predict the
  inode and nanosecond ctime the runner's disk gives the model file.
- A stamp is read only when this user or root owns it and no one else may write it: whoever
  can forge it already runs code as this user or root, and such code could as well change
  what the run imports (the pins included), which no hash check guards against.
- A stamp that is missing, unreadable, malformed or stale costs a hash, never a wrong
  answer; one that cannot be written (a read-only image) leaves every run hashing.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import BinaryIO

from retrieval_eval.fileio import atomic_write_bytes

STAMP_FILE = ".retrieval-eval-sha256.json"
RACY_SECONDS = 2.0
_FORMAT = 1
_KEY_FIELDS = 5

FileKey = tuple[int, int, int, int, int]

# file -> (its key, sha256) already known in this process: a run builds the embedding
# function more than once (chromadb rebuilds it from its config), and each verifies.
_KNOWN: dict[Path, tuple[FileKey, str]] = {}


def folder_sha256(folder: Path, names: tuple[str, ...]) -> dict[str, str]:
    """The sha256 of each of ``names`` in ``folder`` (each file must exist), from the
    folder's stamp where it still describes the file, else by reading the file."""
    usable = not _in_work_tree(folder)
    stamp = _read_stamp(folder) if usable else {}
    found: dict[str, str] = {}
    changed = False
    for name in names:
        path = folder / name
        with path.open("rb") as handle:
            status = os.fstat(handle.fileno())
            key = _key(status)
            known = _KNOWN.get(path)
            recorded = stamp.get(name)
            if known is not None and known[0] == key:
                sha = known[1]
            elif recorded is not None and tuple(recorded[0]) == key:
                sha = recorded[1]
            else:
                started = time.time_ns()
                sha = handle_sha256(handle)
                newest = max(status.st_mtime_ns, status.st_ctime_ns)
                if started - newest >= RACY_SECONDS * 1e9:
                    stamp[name] = (list(key), sha)
                    changed = True
        _KNOWN[path] = (key, sha)
        found[name] = sha
    if usable and changed:
        _write_stamp(folder, stamp)
    return found


def handle_sha256(handle: BinaryIO) -> str:
    """The sha256 of what is left to read from ``handle``."""
    digest = hashlib.sha256()
    for block in iter(lambda: handle.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def _key(status: os.stat_result) -> FileKey:
    return (
        status.st_dev,
        status.st_ino,
        status.st_size,
        status.st_mtime_ns,
        status.st_ctime_ns,
    )


def _in_work_tree(folder: Path) -> bool:
    """True when ``folder`` or a parent holds ``.git`` (a repository's work tree)."""
    absolute = folder.absolute()
    return any((parent / ".git").exists() for parent in (absolute, *absolute.parents))


def _read_stamp(folder: Path) -> dict[str, tuple[list[int], str]]:
    try:
        with (folder / STAMP_FILE).open("rb") as handle:
            status = os.fstat(handle.fileno())
            if status.st_uid not in (os.getuid(), 0) or status.st_mode & (
                stat.S_IWGRP | stat.S_IWOTH
            ):
                return {}
            data = json.loads(handle.read(1 << 16))
        if data.get("format") != _FORMAT:
            return {}
        return {
            str(name): ([int(part) for part in entry["key"]], str(entry["sha256"]))
            for name, entry in data["files"].items()
            if len(entry["key"]) == _KEY_FIELDS
        }
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def _write_stamp(folder: Path, stamp: dict[str, tuple[list[int], str]]) -> None:
    files = {name: {"key": key, "sha256": sha} for name, (key, sha) in sorted(stamp.items())}
    text = json.dumps({"format": _FORMAT, "files": files}, indent=1) + "\n"
    try:
        atomic_write_bytes(folder / STAMP_FILE, text.encode("utf-8"))
        (folder / STAMP_FILE).chmod(0o644)  # whatever the umask: read only if no one else writes
    except OSError:
        pass  # a read-only folder: every run hashes, as before
