"""The command retrievers in examples/, run as a user runs them: `retrieval-eval beir`
with `[retrievers.custom] command = [...]`. Both rank by shared words, so they agree."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.retrieval.service_helpers import REPO, beir_json, tiny_beir

EXAMPLES = REPO / "examples"
NODE = shutil.which("node")
TSC = REPO / "node_modules" / ".bin" / "tsc"


def _evaluate(tmp_path: Path, name: str, command: list[str]) -> dict[str, Any]:
    config = tmp_path / f"{name}.toml"
    config.write_text(f"[retrievers.custom]\ncommand = {json.dumps(command)}\ntimeout_s = 60\n")
    return beir_json(tiny_beir(tmp_path / name), "custom", tmp_path / f"{name}.json", config=config)


def test_the_python_example_is_evaluated(tmp_path: Path) -> None:
    summary = _evaluate(
        tmp_path, "python", [sys.executable, str(EXAMPLES / "python" / "search.py")]
    )
    assert summary["config"]["language"] == "python"
    assert summary["recall@100"] == 1.0
    assert summary["mrr@10"] == pytest.approx((1 + 1 + 1 + 1 + 1 + 1) / 6)


@pytest.mark.skipif(NODE is None, reason="node is not installed (.ci/run installs Debian's nodejs)")
def test_the_typescript_example_gives_the_python_examples_numbers(tmp_path: Path) -> None:
    assert NODE is not None
    typescript = _evaluate(tmp_path, "ts", [NODE, str(EXAMPLES / "typescript" / "search.js")])
    python = _evaluate(tmp_path, "py", [sys.executable, str(EXAMPLES / "python" / "search.py")])
    assert typescript["config"]["language"] == "typescript"
    for measure in ("ndcg@10", "mrr@10", "p@5", "recall@100", "map"):
        assert typescript[measure] == python[measure]


@pytest.mark.skipif(
    NODE is None or not TSC.exists(), reason="needs node and `npm ci` (TypeScript's compiler)"
)
def test_the_committed_javascript_is_the_compilers_output(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(TSC), "-p", str(EXAMPLES / "typescript"), "--outDir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    compiled = (tmp_path / "search.js").read_text()
    assert compiled == (EXAMPLES / "typescript" / "search.js").read_text(), (
        "examples/typescript/search.js is stale: run `npx tsc -p examples/typescript`"
    )
