"""What the numbers were measured with, so drift between baseline and run can be diagnosed.

ONNX Runtime builds differ slightly across platforms and versions (embeddings
differ between macOS ARM and Linux builds); recording them beside the metrics turns
"the scores moved" into "the scores moved because onnxruntime changed".
"""

from __future__ import annotations

import platform
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
    """HEAD of the repository holding ``repository``; None outside git (e.g. a tarball)."""
    folder = repository if repository.is_dir() else repository.parent
    try:
        completed = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = completed.stdout.strip()
    return commit if completed.returncode == 0 and commit else None
