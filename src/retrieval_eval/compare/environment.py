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


def collect_environment(
    *, repository: Path, model_sha256: str | None, dense_model: str | None = None
) -> Environment:
    return Environment(
        platform=platform.platform(),
        python=platform.python_version(),
        retrieval_eval=__version__,
        chromadb=_version("chromadb"),
        onnxruntime=_version("onnxruntime"),
        model_sha256=model_sha256,
        dense_model=dense_model,
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
        return head_from_git_files(folder)
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = completed.stdout.strip()
    return commit if completed.returncode == 0 and commit else None


_COMMIT = re.compile(r"[0-9a-f]{40}")


def head_from_git_files(folder: Path, *, parents: bool = True) -> str | None:
    """HEAD of the checkout holding ``folder`` (``parents=False``: of ``folder`` itself),
    read from git's own files, for where there is no git binary.

    ``.git`` is a folder, or a file ``gitdir: PATH`` (a worktree or a submodule). A
    detached HEAD holds the commit; a branch names a loose or a packed ref, which a
    worktree keeps in the repository's common folder (named by its ``commondir`` file).
    """
    searched = (folder, *folder.parents) if parents else (folder,)
    dot_git = next((p / ".git" for p in searched if (p / ".git").exists()), None)
    if dot_git is None:
        return None
    try:
        git_dir = dot_git
        if dot_git.is_file():
            pointer = dot_git.read_text(encoding="utf-8").strip()
            if not pointer.startswith("gitdir:"):
                return None
            git_dir = (dot_git.parent / pointer.removeprefix("gitdir:").strip()).resolve()
        common = git_dir
        if (git_dir / "commondir").is_file():
            named = (git_dir / "commondir").read_text(encoding="utf-8").strip()
            common = (git_dir / named).resolve()
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if _COMMIT.fullmatch(head):
            return head
        ref = head.removeprefix("ref: ").strip()
        for where in (git_dir, common):
            loose = where / ref
            if loose.is_file():
                commit = loose.read_text(encoding="utf-8").strip()
                return commit if _COMMIT.fullmatch(commit) else None
        packed = common / "packed-refs"
        lines = packed.read_text(encoding="utf-8").splitlines() if packed.is_file() else []
    except OSError:
        return None
    for line in lines:
        commit, _, name = line.partition(" ")
        if name == ref and _COMMIT.fullmatch(commit):
            return commit
    return None
