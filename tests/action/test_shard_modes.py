"""`mode: embed-shard`, `evaluate-shard` and `merge` under the runner's contract.

The artifact hand-over between jobs (upload-artifact / download-artifact) is a
copy of folders here; tests/container/test_act_sharded.py runs the real matrix
under act with its artifact server.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.index.model_install import default_model_dir
from tests.action.git_repo import commit_all, git
from tests.action.payloads import push_event
from tests.action.project import CONFIG, SEMANTIC_FIXTURES, fixture_lines, new_project
from tests.action.test_main_scenarios import (
    MARKER,
    RUN_URL,
    Repo,
    branch,
    statuses,
)
from tests.support.blocking import left_waiting, never_answering
from tests.support.fake_github import FakeGitHub

CONSOLE_SCRIPT = str(Path(sys.executable).with_name("retrieval-eval"))

pytestmark = pytest.mark.slow

MODEL_ENV = {"RETRIEVAL_EVAL_MODEL_DIR": str(default_model_dir(Path.home()))}


@pytest.fixture
def repo(tmp_path: Path, github: FakeGitHub) -> Repo:
    new_project(tmp_path / "workspace")
    return Repo(
        path=tmp_path / "workspace", runs=tmp_path / "runs", github=github, api_url=github.base_url
    )


def without_timings(path: Path) -> dict[str, Any]:
    report = json.loads(path.read_text(encoding="utf-8"))
    report.pop("duration_s")
    for dataset in report["datasets"]:
        for key in ("setup_s", "latency"):
            dataset.pop(key)
        for query in dataset["queries"]:
            query.pop("latency_ms")
        dataset["rows"] = [row for row in dataset["rows"] if row["metric"] != "latency_p95_ms"]
    return report


def test_a_two_shard_matrix_posts_one_comment_equal_to_the_unsharded_run(repo: Repo) -> None:
    semantic = fixture_lines(SEMANTIC_FIXTURES, retrieval_type="semantic")
    # A loaded machine's query latency must not decide the verdict.
    config = CONFIG + '"latency_p95_ms" = false\n'
    repo.commit(
        {"datasets/semantic.jsonl": semantic, "retrieval-eval.toml": config}, "semantic fixtures"
    )
    first = git(repo.path, "rev-parse", "HEAD")
    pushed = repo.action("push", push_event(first), sha=first, extra_env=MODEL_ENV)
    assert pushed.outputs["verdict"] == "baseline-established", pushed.log
    main = commit_all(repo.path, "retrieval-eval: establish baseline")
    branch(repo, main, "feature")
    head = repo.commit(
        {"datasets/corpus/travel/porto.md": "# Porto\n\nPort wine cellars.\n"}, "porto"
    )
    artifacts = repo.path / ".artifacts"

    def pull(**inputs: str) -> Any:
        return repo.pull_request(7, main, head, extra_env=MODEL_ENV, **inputs)

    for index in (1, 2):  # the embed matrix: each job uploads its cache-dir
        cache = repo.path / ".work" / f"cache-{index}"
        result = pull(mode="embed-shard", shard=f"{index}/2", cache_dir=f".work/cache-{index}")
        assert result.returncode == 0, result.log
        assert f"shard {index}/2: " in result.summary
        shutil.copytree(cache, artifacts / "embeddings" / f"embeddings-{index}")
    assert repo.github.comments_on(7) == []  # shard jobs post nothing
    assert statuses(repo, head) == []

    for index in (1, 2):  # the evaluate matrix: download the caches, upload report-dir
        result = pull(
            mode="evaluate-shard",
            shard=f"{index}/2",
            shard_artifacts=".artifacts/embeddings",
            cache_dir=f".work/merged-cache-{index}",
            report_dir=f".artifacts/work-{index}",
        )
        assert result.returncode == 0, result.log
        assert f"shard {index}/2: evaluated " in result.summary
        shutil.copytree(
            repo.path / ".artifacts" / f"work-{index}", artifacts / "partials" / f"partial-{index}"
        )
    assert repo.github.comments_on(7) == []

    merged = pull(mode="merge", shard_artifacts=".artifacts/partials", report_dir=".artifacts/out")
    assert merged.returncode == 0, merged.log
    [comment] = repo.github.comments_on(7)
    assert comment["body"].startswith(MARKER + "\n")
    assert "### semantic.jsonl · dense · 4 queries" in comment["body"]
    assert statuses(repo, head) == [("success", "retrieval-eval", RUN_URL)]
    assert merged.outputs["verdict"] == "passed"

    # The cache the shards started from (the embed jobs' caches merged, no query yet: each
    # evaluate job cached its own queries), so the embedding counts match as well.
    whole_cache = repo.path / ".work" / "whole-cache"
    embedded_shards = [str(repo.path / ".work" / f"cache-{index}") for index in (1, 2)]
    merged_caches = subprocess.run(
        [CONSOLE_SCRIPT, "cache", "merge", "--into", str(whole_cache), *embedded_shards],
        capture_output=True,
        text=True,
        check=False,
    )
    assert merged_caches.returncode == 0, merged_caches.stderr
    whole = pull(comment="off", report_dir=".artifacts/whole", cache_dir=".work/whole-cache")
    assert whole.returncode == 0, whole.log
    assert without_timings(repo.path / ".artifacts" / "out" / "report.json") == without_timings(
        repo.path / ".artifacts" / "whole" / "report.json"
    )


def test_a_shard_mode_without_a_shard_fails_with_the_input_named(repo: Repo) -> None:
    head = git(repo.path, "rev-parse", "HEAD")
    result = repo.push(head, mode="evaluate-shard")
    assert result.returncode == 2
    assert "input `shard` (I/N) is required with `mode: evaluate-shard`" in result.log
    assert result.outputs["verdict"] == "error"


def test_merge_with_a_missing_shard_fails_and_posts_an_error_status(repo: Repo) -> None:
    head = git(repo.path, "rev-parse", "HEAD")
    first = repo.push(head, mode="evaluate-shard", shard="1/2", report_dir=".artifacts/p/1")
    assert first.returncode == 0, first.log
    merged = repo.push(head, mode="merge", shard_artifacts=".artifacts/p")
    assert merged.returncode == 2
    assert "shard(s) 2/2 missing" in merged.log
    assert [s["state"] for s in repo.github.statuses_for(head)] == ["error"]


def test_merge_names_the_missing_shard_in_the_error_status(repo: Repo) -> None:
    """A failed shard job uploads no partial; the merge (run with `if: !cancelled()`) must
    still end the pull request's wait with an error status that says which shard."""
    head = git(repo.path, "rev-parse", "HEAD")
    first = repo.push(head, mode="evaluate-shard", shard="1/3", report_dir=".artifacts/p/1")
    assert first.returncode == 0, first.log
    third = repo.push(head, mode="evaluate-shard", shard="3/3", report_dir=".artifacts/p/3")
    assert third.returncode == 0, third.log
    merged = repo.push(head, mode="merge", shard_artifacts=".artifacts/p")
    assert merged.returncode == 2
    assert merged.outputs["verdict"] == "error"
    [status] = repo.github.statuses_for(head)
    assert status["state"] == "error"
    assert "2/3" in status["description"]


def test_merge_with_no_partial_at_all_posts_an_error_status_naming_the_folder(repo: Repo) -> None:
    """Every shard failed: download-artifact found nothing and the folder is not there."""
    head = git(repo.path, "rev-parse", "HEAD")
    merged = repo.push(head, mode="merge", shard_artifacts="partials")
    assert merged.returncode == 2
    assert merged.outputs["verdict"] == "error"
    [status] = repo.github.statuses_for(head)
    assert status["state"] == "error"
    assert "partials" in status["description"]
    assert "no shard's partial result" in merged.log


def test_an_evaluate_shard_merges_caches_made_with_the_model_the_config_names(
    repo: Repo,
) -> None:
    """`[retrievers.dense] model` names another model: the evaluate shard checks the
    downloaded caches against that model and evaluates from them without embedding."""
    semantic = fixture_lines(SEMANTIC_FIXTURES, retrieval_type="semantic")
    config = (
        CONFIG + '"latency_p95_ms" = false\n[retrievers.dense]\nmodel = "paraphrase-MiniLM-L3-v2"\n'
    )
    head = repo.commit(
        {"datasets/semantic.jsonl": semantic, "retrieval-eval.toml": config}, "another model"
    )
    event = push_event(head)
    embedded = repo.action(
        "push",
        event,
        sha=head,
        extra_env=MODEL_ENV,
        mode="embed-shard",
        shard="1/1",
        cache_dir=".work/cache",
    )
    assert embedded.returncode == 0, embedded.log
    shutil.copytree(repo.path / ".work" / "cache", repo.path / ".artifacts" / "e" / "cache-1")
    evaluated = repo.action(
        "push",
        event,
        sha=head,
        mode="evaluate-shard",
        shard="1/1",
        shard_artifacts=".artifacts/e",
        cache_dir=".work/merged",
        report_dir=".artifacts/p/1",
        extra_env=MODEL_ENV,
    )
    assert evaluated.returncode == 0, evaluated.log
    assert "vectors from 1 cache(s)" in evaluated.log
    [partial] = (repo.path / ".artifacts" / "p" / "1").glob("*.json")
    assert "paraphrase-MiniLM-L3-v2" in partial.read_text(encoding="utf-8")


def test_an_evaluate_shard_past_the_time_limit_ends_with_an_error_verdict(
    repo: Repo, tmp_path: Path
) -> None:
    """A shard job is bounded as `evaluate` is: a retriever that never answers ends it at
    `time_limit_s` with the `error` verdict and the message naming the setting."""
    fifo = never_answering(repo.path, time_limit_s=2, folder=tmp_path)
    head = commit_all(repo.path, "a retriever that never answers")
    shard = repo.push(head, mode="evaluate-shard", shard="1/1", report_dir=".artifacts/p/1")
    assert shard.returncode == 2, shard.log
    assert shard.outputs["verdict"] == "error"
    assert (
        "the evaluation took longer than time_limit_s (2 s) and was stopped in the step "
        "'indexing for custom'" in shard.log
    )
    assert not (repo.path / ".artifacts" / "p" / "1" / "partial.json").exists()
    assert not left_waiting(fifo)
