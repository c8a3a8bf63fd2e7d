"""What the numbers were measured with, so drift between baseline and run can be diagnosed.

ONNX Runtime builds differ slightly across platforms and versions (embeddings
differ between macOS ARM and Linux builds); recording them beside the metrics turns
"the scores moved" into "the scores moved because onnxruntime changed".
"""

from __future__ import annotations

import platform
import re
import subprocess
from importlib import metadata
from pathlib import Path

from retrieval_eval import __version__
from retrieval_eval.results import Environment


def collect_environment(*, repository: Path, model_sha256: str | None) -> Environment:
    return Environment(
        platform=platform.platform(),
        python=platform.python_version(),
        retrieval_eval=__version__,
        chromadb=_version("chromadb"),
        onnxruntime=_version("onnxruntime"),
        model_sha256=model_sha256,
        git_commit=git_commit(repository),
    )


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def git_commit(repository: Path) -> str | None:
    """HEAD of the repository holding ``repository``; None outside git (e.g. a tarball).

    The Action's image has no git binary, so without one HEAD is read from ``.git``
    itself: a detached HEAD holds the commit, a branch names a loose or packed ref.
    """
    folder = repository if repository.is_dir() else repository.parent
    try:
        completed = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        )
    except FileNotFoundError:
        return _head_from_git_files(folder)
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = completed.stdout.strip()
    return commit if completed.returncode == 0 and commit else None


_COMMIT = re.compile(r"[0-9a-f]{40}")


def _head_from_git_files(folder: Path) -> str | None:
    git_dir = next((p / ".git" for p in (folder, *folder.parents) if (p / ".git").is_dir()), None)
    if git_dir is None:
        return None
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if _COMMIT.fullmatch(head):
            return head
        ref = head.removeprefix("ref: ")
        loose = git_dir / ref
        if loose.is_file():
            commit = loose.read_text(encoding="utf-8").strip()
            return commit if _COMMIT.fullmatch(commit) else None
        packed = git_dir / "packed-refs"
        lines = packed.read_text(encoding="utf-8").splitlines() if packed.is_file() else []
    except OSError:
        return None
    for line in lines:
        commit, _, name = line.partition(" ")
        if name == ref and _COMMIT.fullmatch(commit):
            return commit
    return None
