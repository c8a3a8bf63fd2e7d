"""`retrieval-eval schema` writes the schemas published in schema/, byte for byte: they
match the models they come from (report.json, baseline.json, a dataset line)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CONSOLE_SCRIPT = str(Path(sys.executable).parent / "retrieval-eval")
PUBLISHED = ("baseline.schema.json", "fixture.schema.json", "report.schema.json")


def test_the_console_script_writes_the_published_schemas(repo_root: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [CONSOLE_SCRIPT, "schema", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    written = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert written == sorted(PUBLISHED)
    committed = sorted(path.name for path in (repo_root / "schema").glob("*.schema.json"))
    assert committed == sorted(PUBLISHED)
    for name in PUBLISHED:
        assert (tmp_path / "out" / name).read_text(encoding="utf-8") == (
            repo_root / "schema" / name
        ).read_text(encoding="utf-8"), f"schema/{name} is out of date: run `retrieval-eval schema`"
