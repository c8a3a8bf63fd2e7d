"""A custom reranker (a Python factory or a long-running command), through
`retrieval-eval beir --config` as a user runs it: it reorders the fused top
`rerank_depth`, its cost is counted, an invented result is refused, a factory is
imported from the project and bounded in time, and the table is required."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.retrieval.rerank.beir_project import CLI, REPO_ROOT, beir, beir_dir, config_file

__all__ = ["beir_dir"]  # a fixture, used by name


def test_a_custom_factory_reranker(beir_dir: Path, tmp_path: Path) -> None:
    _, fused, _ = beir(beir_dir, tmp_path, None, name="plain")
    config = config_file(
        tmp_path,
        'reranker = "custom"\nrerank_depth = 2\n[retrievers.hybrid.custom]\n'
        'python = "tests.retrieval.own_reranker:make"\noptions = { cost = 0.0003 }\n',
    )
    done, reranked, summary = beir(beir_dir, tmp_path, config)
    assert done.returncode == 0, done.stderr
    for qid, order in fused.items():
        assert reranked[qid] == sorted(order[:2], reverse=True) + order[2:]
    assert summary["cost_per_query_usd"] == pytest.approx(0.0003)
    assert summary["config"]["reranker"]["python"] == "tests.retrieval.own_reranker:make"


def test_a_custom_command_reranker_and_its_invented_result(beir_dir: Path, tmp_path: Path) -> None:
    _, fused, _ = beir(beir_dir, tmp_path, None, name="plain")
    script = REPO_ROOT / "tests" / "retrieval" / "own_rerank_process.py"
    config = config_file(
        tmp_path,
        f'reranker = "custom"\nrerank_depth = 3\n[retrievers.hybrid.custom]\n'
        f'command = ["{sys.executable}", "{script}"]\n',
    )
    done, reranked, summary = beir(beir_dir, tmp_path, config)
    assert done.returncode == 0, done.stderr
    for qid, order in fused.items():
        assert reranked[qid] == sorted(order[:3], reverse=True) + order[3:]
    assert summary["cost_per_query_usd"] == pytest.approx(0.0002)

    bad = config_file(
        tmp_path,
        f'reranker = "custom"\n[retrievers.hybrid.custom]\n'
        f'command = ["{sys.executable}", "{script}", "--invent"]\n',
    )
    done, _, _ = beir(beir_dir, tmp_path, bad)
    assert done.returncode == 2
    assert "'not-a-candidate', which was not one of the" in done.stderr


def test_custom_reranker_needs_its_table(beir_dir: Path, tmp_path: Path) -> None:
    done, _, _ = beir(beir_dir, tmp_path, config_file(tmp_path, 'reranker = "custom"\n'))
    assert done.returncode == 2
    assert "[retrievers.hybrid.custom]" in done.stderr


SLOW_RERANKER = """\
import time

class Slow:
    name = "slow"

    def rerank(self, query, candidates):
        time.sleep(3600)  # never answers: the run must not wait for it

    def describe(self):
        return {}

def make():
    return Slow()
"""


def test_a_factory_reranker_imports_from_the_project_and_is_bounded_in_time(
    beir_dir: Path, tmp_path: Path
) -> None:
    """No PYTHONPATH: the module sits in the folder the command runs in, as in a repository."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "slow_reranker.py").write_text(SLOW_RERANKER)
    (project / "retrieval-eval.toml").write_text(
        '[retrievers.hybrid]\nreranker = "custom"\n'
        '[retrievers.hybrid.custom]\npython = "slow_reranker:make"\ntimeout_s = 1\n'
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    args = [str(CLI), "beir", str(beir_dir), "--retriever", "hybrid", "--k", "4"]
    done = subprocess.run(
        [*args, "--config", "retrieval-eval.toml"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=project,
        timeout=600,
    )
    assert done.returncode == 2, done.stderr
    assert "custom reranker slow_reranker:make: rerank() did not return within 1 s" in done.stderr
    assert "raise retrievers.hybrid.custom.timeout_s if it is just slow" in done.stderr
