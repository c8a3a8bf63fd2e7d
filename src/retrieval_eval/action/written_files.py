"""What a run leaves for the commit step is what retrieval-eval measured, and nothing else.

A push run may leave ``baseline.json`` and the history in the workspace for a following
step to commit. The retriever ran in between, and where no boundary keeps it out (a run
as the workspace's own user, or as root without the boundary's user) it can write them:
a retriever that zeroed baseline.json while the run passed had its zeros committed. So the
Action reads both files before the evaluation (``Snapshot``), and afterwards, before it
writes anything of its own to them, checks them (``check``):

- a file the run did not write must hold the same bytes as before;
- the judged tier's judgments file the run wrote must hold the bytes it wrote (their
  sha256 is in the report);
- a baseline the run wrote must hold, for each dataset it established, the entry made from
  the run's own report, and for every other dataset the values it held before (plus, for
  a measure it never recorded, the run's value).

Anything else is put back as it was, and the run is an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.compare.baseline import Baseline, baseline_entry
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.fileio import atomic_write_bytes
from retrieval_eval.results import RunReport


@dataclass(frozen=True)
class Snapshot:
    """Each file's bytes before the evaluation (None: it did not exist)."""

    files: dict[Path, bytes | None]

    @classmethod
    def take(cls, paths: Iterable[Path | None]) -> Snapshot:
        return cls({path: _read(path) for path in paths if path is not None})

    def restore(self, path: Path) -> None:
        before = self.files[path]
        if before is None:
            with contextlib.suppress(OSError):
                path.unlink()
        else:
            atomic_write_bytes(path, before)


def check(
    snapshot: Snapshot,
    *,
    baseline: Path,
    report: RunReport | None,
    judgments: Path | None = None,
) -> RetrievalEvalError | None:
    """None when every file is as the run left it; else the first that is not, put back."""
    for path, before in snapshot.files.items():
        now = _read(path)
        if now == before:
            continue
        written = report is not None and report.baseline_written and path == baseline
        if path == judgments and judgments != baseline:
            problem = _not_as_judged(now, report)
        elif written:
            problem = _unmeasured(before, now, report)
        else:
            problem = "changed during the run"
        if problem is None:
            continue
        snapshot.restore(path)
        return RetrievalEvalError(
            f"{problem}, not by retrieval-eval: put back as it was; the retriever (code from "
            "the repository) can write the workspace here",
            file=path,
        )
    return None


def changed_files(snapshot: Snapshot, workspace: Path) -> tuple[list[str], list[Path]]:
    """The files that differ from their snapshot, as paths in the repository (what the
    commit step commits), and those that are not inside the repository (never committed:
    a configured path or a symlink can point anywhere)."""
    root = workspace.resolve()
    inside: list[str] = []
    outside: list[Path] = []
    for path, before in snapshot.files.items():
        if _read(path) == before:
            continue
        named = Path(os.path.normpath(root / path))
        if named.is_relative_to(root) and named.resolve().is_relative_to(root):
            inside.append(named.relative_to(root).as_posix())
        else:
            outside.append(path)
    return inside, outside


def _not_as_judged(now: bytes | None, report: RunReport | None) -> str | None:
    """Why the judgments file is not the one the run wrote, or None."""
    tier = report.judged_tier if report is not None else None
    recorded = tier.judgments_sha256 if tier is not None else None
    if recorded is None:
        return "changed during the run"
    if now is None:
        return "removed during the run"
    if hashlib.sha256(now).hexdigest() != recorded:
        return "differs from the judgments the run wrote"
    return None


def _unmeasured(before: bytes | None, now: bytes | None, report: RunReport | None) -> str | None:
    """Why the baseline the run wrote is not made of the run's own numbers, or None."""
    assert report is not None
    if now is None:
        return "removed during the run"
    try:
        written = Baseline.model_validate_json(now)
        previous = Baseline.model_validate_json(before) if before is not None else Baseline()
    except ValueError:
        return "changed during the run"
    ours = {d.name: d for d in report.datasets}
    for name in {*written.datasets, *previous.datasets}:
        entry, old = written.datasets.get(name), previous.datasets.get(name)
        dataset = ours.get(name)
        if dataset is not None and dataset.baseline_established:
            if entry != baseline_entry(dataset, k=report.k):
                return f"its `{name}` entry differs from what the run measured"
            continue
        if entry is None or old is None:
            if entry != old:
                return f"its `{name}` entry changed"
            continue
        kept = old.aggregates or {}
        new = dataset.aggregates if dataset is not None else {}
        for measure, value in (entry.aggregates or {}).items():
            expected = kept[measure] if measure in kept else _value(new.get(measure))
            if not _same(value, expected):
                return f"its `{name}` {measure} differs from what the run measured"
        if any(measure not in (entry.aggregates or {}) for measure in kept):
            return f"its `{name}` entry lost a measure"
    return None


def _value(aggregate: object) -> float | None:
    value = getattr(aggregate, "value", None)
    return None if value is None else round(float(value), 12)


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=0.0, abs_tol=1e-12)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return None
