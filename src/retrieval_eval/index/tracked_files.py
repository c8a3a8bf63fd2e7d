"""Which files git tracks, read from the work tree's index file itself.

The Action's image has no git binary, and a file the checkout wrote (one the pull
request committed) must be told apart from one a cache restore or an earlier run
wrote. The index (``.git/index``) lists every tracked path; formats 2, 3 and 4 are
read, with SHA-1 or SHA-256 object names, and a split index (``core.splitIndex``)
is read together with its shared index. An index this reader does not understand is
reported as unreadable: callers treat "cannot tell" as "tracked".
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_SIGNATURE = b"DIRC"
_STAT_BYTES = 40  # ctime, mtime (seconds and nanoseconds), dev, ino, mode, uid, gid, size
_EXTENDED = 0x4000
_NAME_MASK = 0x0FFF
_MAX_INDEX_BYTES = 1 << 30  # an index this large is not one git wrote for a work tree


@dataclass(frozen=True)
class Tracked:
    paths: frozenset[Path]  # the given paths git tracks (as given)
    unreadable: str | None  # why the index could not be read; None when it was


def tracked_by_git(paths: Iterable[Path]) -> Tracked:
    """Those of ``paths`` (absolute) that the index of their work tree lists, by the path
    as given or by where its symlinks lead inside the same work tree. Paths outside any
    git work tree are not tracked."""
    found: set[Path] = set()
    for path in paths:
        root = _work_tree(path)
        if root is None:
            continue
        needles = _relative_names(path, root)
        if not needles:
            continue
        try:
            names = _index_names(root, needles)
        except (OSError, ValueError) as error:
            return Tracked(frozenset(found), f"{_index_file(root)}: {error}")
        if any(_listed(needle, names) for needle in needles):
            found.add(path)
    return Tracked(frozenset(found), None)


def tracked_under(folder: Path) -> Tracked:
    """``folder`` (absolute) in ``paths`` when git tracks any file inside it, by the path
    as given or by where its symlinks lead inside the same work tree."""
    root = _work_tree(folder / "_")
    if root is None or folder == root:
        return Tracked(frozenset(), None)
    prefixes = {name + b"/" for name in _relative_names(folder, root)}
    try:
        names = _index_names(root, prefixes)
    except (OSError, ValueError) as error:
        return Tracked(frozenset(), f"{_index_file(root)}: {error}")
    listed = any(name.startswith(prefix) for name in names for prefix in prefixes)
    return Tracked(frozenset({folder} if listed else ()), None)


def _work_tree(path: Path) -> Path | None:
    for folder in path.parents:
        try:
            if (folder / ".git").exists():
                return folder
        except OSError:  # a name too long for the file system lies in no work tree
            return None
    return None


def _relative_names(path: Path, root: Path) -> set[bytes]:
    """The path relative to the work tree, as written and with its symlinks resolved."""
    names = {os.fsencode(path.relative_to(root).as_posix())}
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path))
    if real.is_relative_to(real_root) and real != real_root:
        names.add(os.fsencode(real.relative_to(real_root).as_posix()))
    return names


def _listed(needle: bytes, names: set[bytes]) -> bool:
    if needle in names:
        return True
    # A sparse index lists a whole folder outside the sparse cone as one "dir/" entry.
    return any(needle.startswith(prefix) for prefix in _folders(needle) if prefix in names)


def _folders(name: bytes) -> list[bytes]:
    parts = name.split(b"/")
    return [b"/".join(parts[:i]) + b"/" for i in range(1, len(parts))]


def _top(name: bytes) -> bytes:
    head, slash, _ = name.partition(b"/")
    return head + slash


def _index_file(root: Path) -> Path:
    dot_git = root / ".git"
    if dot_git.is_file():  # a linked worktree or a submodule: "gitdir: <path>"
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            return (root / text.removeprefix("gitdir:").strip()) / "index"
    return dot_git / "index"


def _index_names(root: Path, needles: set[bytes]) -> set[bytes]:
    """Every path the index lists, or, when the index cannot list any needle, none."""
    index = _index_file(root)
    try:
        size = index.stat().st_size
    except FileNotFoundError:  # a repository with nothing added yet
        return set()
    if size > _MAX_INDEX_BYTES:
        raise ValueError(f"{size} bytes is larger than any index git writes")
    data = index.read_bytes()
    version = _version(data)
    if version != 4 and b"link" not in data and not any(_top(n) in data for n in needles):
        # Formats 2 and 3 store each path whole (unless split): when not even a needle's
        # top-level folder (or its name, for a file at the top) occurs, none is listed.
        return set()
    names, shared = _parse_any(data, version)
    if shared is not None:
        shared_data = (index.parent / f"sharedindex.{shared}").read_bytes()
        # The union may still list a path the split part removed: "tracked" errs safe.
        names |= _parse_any(shared_data, _version(shared_data))[0]
    return names


def _version(data: bytes) -> int:
    if len(data) < 12 or data[:4] != _SIGNATURE:
        raise ValueError("not a git index (no DIRC signature)")
    (version,) = struct.unpack_from(">I", data, 4)
    if version not in (2, 3, 4):
        raise ValueError(f"index format {version} is not one this reader knows (2, 3 or 4)")
    return int(version)


def _parse_any(data: bytes, version: int) -> tuple[set[bytes], str | None]:
    last_error: ValueError | None = None
    for hash_bytes in (20, 32):  # SHA-1 or SHA-256 object names; only one parses cleanly
        try:
            return _parse(data, version, hash_bytes)
        except ValueError as error:
            last_error = error
    assert last_error is not None
    raise last_error


def _parse(data: bytes, version: int, hash_bytes: int) -> tuple[set[bytes], str | None]:
    """The index's paths, and the hex name of its shared index when it is split."""
    (count,) = struct.unpack_from(">I", data, 8)
    offset = 12
    names: set[bytes] = set()
    previous = b""
    end = len(data) - hash_bytes  # the file ends with a checksum of everything before it
    for _ in range(count):
        start = offset
        offset += _STAT_BYTES + hash_bytes
        if offset + 2 > end:
            raise ValueError("the index ends inside an entry")
        (flags,) = struct.unpack_from(">H", data, offset)
        offset += 2
        if flags & _EXTENDED:
            if version < 3:
                raise ValueError("an extended entry in a format 2 index")
            offset += 2
        if version == 4:
            strip, offset = _varint(data, offset)
            if strip > len(previous):
                raise ValueError("a path prefix longer than the previous path")
            stop = data.find(b"\0", offset, end)
            if stop < 0:
                raise ValueError("an unterminated path")
            name = previous[: len(previous) - strip] + data[offset:stop]
            offset = stop + 1
        else:
            stop = data.find(b"\0", offset, end)
            if stop < 0:
                raise ValueError("an unterminated path")
            name = data[offset:stop]
            # Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            offset = start + ((offset - start + len(name) + 8) & ~7)
            if offset > end or data[stop:offset].strip(b"\0"):
                raise ValueError("an entry's padding is not NULs")
        length = flags & _NAME_MASK
        if length < _NAME_MASK and len(name) != length:
            raise ValueError("an entry's path does not have the length its flags give")
        if name:  # empty only in a split index, for an entry its shared index names
            names.add(name)
        previous = name
    return names, _shared_index(data, offset, end, hash_bytes)


def _varint(data: bytes, offset: int) -> tuple[int, int]:
    """git's offset varint (varint.c): 7 bits a byte, each continuation adding one."""
    if offset >= len(data):
        raise ValueError("the index ends inside a number")
    byte = data[offset]
    offset += 1
    value = byte & 0x7F
    while byte & 0x80:
        if offset >= len(data):
            raise ValueError("the index ends inside a number")
        byte = data[offset]
        offset += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, offset


def _shared_index(data: bytes, offset: int, end: int, hash_bytes: int) -> str | None:
    shared = None
    while offset + 8 <= end:
        signature = data[offset : offset + 4]
        (size,) = struct.unpack_from(">I", data, offset + 4)
        if signature == b"link":
            if size < hash_bytes:
                raise ValueError("a split index's link names no shared index")
            shared = data[offset + 8 : offset + 8 + hash_bytes].hex()
        offset += 8 + size
    if offset != end:
        raise ValueError("the index's extensions do not end at its checksum")
    return shared
