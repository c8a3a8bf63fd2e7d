"""Which files a ``validate PATH...`` call covers.

A folder means its ``semantic.jsonl``, ``keyword.jsonl`` and ``hybrid.jsonl``:
any that exist are validated (a project may only test one retrieval type), a
folder with none of them is a usage error, and other ``*.jsonl`` files there
(a JSONL corpus, say) are left alone and listed as ignored. A file given by
name is always validated, whatever it is called.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.errors import InputError
from retrieval_eval.load.fixtures import RETRIEVAL_TYPES

DATASET_FILE_NAMES = tuple(f"{kind}.jsonl" for kind in RETRIEVAL_TYPES)


@dataclass(frozen=True)
class DatasetFiles:
    files: tuple[Path, ...]
    ignored: tuple[Path, ...]


def resolve_dataset_files(paths: Sequence[Path]) -> DatasetFiles:
    files: list[Path] = []
    ignored: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise InputError("no such file or folder", file=path)
        if path.is_dir():
            found = [path / name for name in DATASET_FILE_NAMES if (path / name).exists()]
            if not found:
                raise InputError(
                    f"no dataset files in this folder (expected {', '.join(DATASET_FILE_NAMES)})",
                    file=path,
                )
            candidates = found
            ignored.extend(
                other
                for other in sorted(path.glob("*.jsonl"))
                if other.name not in DATASET_FILE_NAMES
            )
        else:
            candidates = [path]
        for candidate in candidates:
            key = candidate.resolve()
            if key not in seen:
                seen.add(key)
                files.append(candidate)
    # A file named outright, or a folder given twice, is not "ignored": only what no
    # argument covers is, and each such file once.
    left: dict[Path, Path] = {}
    for other in ignored:
        if other.resolve() not in seen:
            left.setdefault(other.resolve(), other)
    return DatasetFiles(files=tuple(files), ignored=tuple(left.values()))
