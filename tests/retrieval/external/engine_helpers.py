"""What the engine and framework retriever tests share: `retrieval-eval run` and
`retrieval-eval action` on this repository's own datasets and notes, and the built-in
`dense` retriever's NDCG@10 on them (what an engine searching the same vectors exactly,
and a framework retriever over the same chunks and model, must land within 0.01 of)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.index.model_install import default_model_dir
from tests.action.git_repo import commit_all, init_repo, write
from tests.action.payloads import push_event
from tests.retrieval.service_helpers import REPO, run_cli, run_repo_datasets
from tests.support.action import ActionRun, run_action
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

PARITY = 0.01  # NDCG@10 within this of the built-in retriever mirrored
DATASETS = tuple(sorted(path.name for path in (REPO / "datasets").glob("*.jsonl")))
MODEL_ENV = {"RETRIEVAL_EVAL_MODEL_DIR": str(default_model_dir(Path.home()))}
# The gate's absolute bounds and latency are not what these tests are about.
NO_BOUNDS = """\
[thresholds]
"mrr@10" = false
"ndcg@10" = false
"p@5" = false
"latency_p95_ms" = false
"""


def ndcg(report: Mapping[str, Any]) -> dict[str, float]:
    return {d["name"]: d["aggregates"]["ndcg@10"]["value"] for d in report["datasets"]}


def assert_parity(report: Mapping[str, Any], reference: Mapping[str, float]) -> None:
    measured = ndcg(report)
    assert set(measured) == set(reference)
    for name, value in measured.items():
        assert abs(value - reference[name]) <= PARITY, (name, value, reference[name])


@pytest.fixture(scope="session")
def embeddings_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One embedding cache for the session's runs: the notes are embedded once."""
    return tmp_path_factory.mktemp("embeddings")


@pytest.fixture(scope="session")
def dense_ndcg(
    tmp_path_factory: pytest.TempPathFactory, embeddings_cache: Path
) -> dict[str, float]:
    """`dense` (exact search in memory) on the repository's datasets."""
    folder = tmp_path_factory.mktemp("dense")
    _, report = run_repo_datasets(folder, "dense", f'cache_dir = "{embeddings_cache}"\n')
    return ndcg(report)


def run_on_repo(
    folder: Path,
    retriever: str,
    table: str,
    embeddings: Path,
    *,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """`retrieval-eval run` on the repository's datasets with every dataset served by
    ``retriever`` configured by ``table``; report.json."""
    folder.mkdir(parents=True, exist_ok=True)
    mapping = "".join(f'"{name}" = "{retriever}"\n' for name in DATASETS)
    (folder / "retrieval-eval.toml").write_text(
        f"[dataset_retrievers]\n{mapping}\n"
        f'[retrievers.dense]\ncache_dir = "{embeddings}"\n\n'
        f"[retrievers.{retriever}]\n{table}"
    )
    done = _run(folder, env)
    assert done.returncode in (0, 1), done.stderr
    report: dict[str, Any] = json.loads((folder / "report" / "report.json").read_text())
    return report


def failing_run(folder: Path, config: str, *, env: Mapping[str, str] | None = None) -> str:
    """`retrieval-eval run` with ``config`` that must fail with exit 2; its stderr."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "retrieval-eval.toml").write_text(config)
    done = _run(folder, env)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    return done.stderr


def _run(folder: Path, env: Mapping[str, str] | None) -> Any:
    return run_cli(
        "run",
        "--datasets",
        str(REPO / "datasets"),
        "--corpus",
        str(REPO / "datasets" / "corpus"),
        "--baseline",
        str(folder / "baseline.json"),
        "--report-dir",
        str(folder / "report"),
        "--quiet",
        cwd=folder,
        env=env,
    )


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN, repository="octo/notes") as api:
        yield api


def action_on_repo(
    tmp_path: Path,
    github: FakeGitHub,
    config: str,
    *,
    files: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> tuple[ActionRun, str]:
    """`retrieval-eval action` on a push to a git repository holding this repository's
    datasets and notes, ``config`` as its retrieval-eval.toml; the run and the pushed sha."""
    workspace = tmp_path / "workspace"
    init_repo(workspace)
    shutil.copytree(REPO / "datasets", workspace / "datasets")
    write(
        workspace,
        {
            "retrieval-eval.toml": NO_BOUNDS + config,
            ".gitignore": "retrieval-eval-report/\n.retrieval-eval-cache/\n__pycache__/\n",
            **(files or {}),
        },
    )
    sha = commit_all(workspace, "notes search with an engine")
    result = run_action(
        workspace,
        tmp_path / "run",
        event_name="push",
        payload=push_event(sha),
        api_url=github.base_url,
        sha=sha,
        extra_env={**MODEL_ENV, **(extra_env or {})},
        github_retry_seconds="5",
    )
    return result, sha


def action_report(tmp_path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(
        (tmp_path / "workspace" / "retrieval-eval-report" / "report.json").read_text()
    )
    return report


def engine_mapping(retriever: str) -> str:
    return "[dataset_retrievers]\n" + "".join(f'"{n}" = "{retriever}"\n' for n in DATASETS)
