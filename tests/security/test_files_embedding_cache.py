"""A damaged embedding cache heals itself: moved aside, rebuilt, and said so.

Threat (availability): the cache is restored by `actions/cache` from an earlier
run; a torn or replaced file used to stop every run with "delete it" until a
person intervened, which on a cache key nobody can delete from a pull request
means a red check that only time would clear.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

from retrieval_eval.index.model_install import default_model_dir
from tests.compare.conftest import KEYWORD_FIXTURES, Project, write_dataset
from tests.security.test_files_baseline import CONSOLE_SCRIPT


def test_a_corrupt_cache_is_moved_aside_rebuilt_and_warned_about(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (project.datasets / "keyword.jsonl").unlink()
    semantic = [{**f, "retrieval_type": "semantic"} for f in KEYWORD_FIXTURES]
    write_dataset(project.datasets / "semantic.jsonl", semantic)
    cache = project.root / ".retrieval-eval-cache" / "embeddings" / "embeddings.sqlite3"
    cache.parent.mkdir(parents=True)
    damaged = b"SQLite format 3\0" + b"torn by an interrupted cache restore" * 200
    cache.write_bytes(damaged)

    result = subprocess.run(
        [CONSOLE_SCRIPT, "run", "--quiet", "--model-dir", str(default_model_dir(Path.home()))],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(project.root)},
    )

    assert result.returncode == 0, result.stderr
    [aside] = [p for p in cache.parent.iterdir() if p.name.startswith("embeddings.sqlite3.corrupt")]
    assert aside.read_bytes() == damaged  # kept for a post-mortem, never deleted
    assert (
        f"warning: the embedding cache {cache} was not a usable SQLite database "
        f"(file is not a database); moved it aside to {aside.name} and started a new one"
    ) in result.stderr
    with sqlite3.connect(cache) as db:  # rebuilt, and filled by this run
        (rows,) = db.execute("SELECT COUNT(*) FROM vectors").fetchone()
    assert rows > 0
