"""Files we write get the mode the umask gives, like any other tool's.

Threat (availability): the container runs as root and the workflow's later steps
do not. With 0600 files the documented `git add baseline.json` step and the fork
artifact upload could not read what the Action wrote.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.compare.conftest import Project
from tests.security.test_files_baseline import CONSOLE_SCRIPT


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640)])
def test_baseline_and_reports_get_the_umask_mode(tmp_path: Path, umask: int, mode: int) -> None:
    project = Project(tmp_path)
    result = subprocess.run(
        [CONSOLE_SCRIPT, "run", "--quiet"],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(project.root)},
        preexec_fn=lambda: os.umask(umask),
    )
    assert result.returncode == 0, result.stderr
    written = [project.baseline, *sorted(project.report_dir.iterdir())]
    assert len(written) >= 3  # baseline.json, report.json, report.md
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == mode, path.name
