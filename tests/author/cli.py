"""Run the `retrieval-eval` console script the way a user does: a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONSOLE_SCRIPT = Path(sys.executable).with_name("retrieval-eval")


def retrieval_eval(
    *args: str,
    cwd: Path,
    stdin: str = "",
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "GITHUB_"))}
    base.pop("CI", None)
    return subprocess.run(
        [str(CONSOLE_SCRIPT), *args],
        cwd=cwd,
        input=stdin,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
