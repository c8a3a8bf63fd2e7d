"""Read-only git queries on the checked-out workspace.

In a container action the workspace belongs to the runner's user while we run
as root, so git refuses it ("dubious ownership") unless told it is safe. Only
reading commands are run here (show, diff, cat-file, rev-parse).
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def run_git(cwd: Path, *args: str, timeout: float = 120) -> bytes | None:
    """stdout, or None when git is missing, fails, or the history lacks what was asked."""
    command = ["git", "-c", f"safe.directory={cwd.resolve()}", *args]
    try:
        completed = subprocess.run(
            command, cwd=cwd, capture_output=True, check=False, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return completed.stdout if completed.returncode == 0 else None
