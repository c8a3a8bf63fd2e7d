"""The sharded workflow of docs/action.md, run by act as a matrix with artifacts.

The workflow is read from docs/action.md itself (so the documentation and this test
cannot drift), with two shards instead of four, and one step added to the merge job
that uploads its report-dir, so the test can read the merged report back from act's
artifact server. act runs the matrix (two embed jobs, two evaluate jobs, one merge job)
in the debootstrapped Debian with Node.js (docker/act-runner.Dockerfile), serves the
artifacts from a folder (``--artifact-server-path``), and builds ``org/retrieval-eval@v1``
from this checkout's Dockerfile (``--local-repository``).

GitHub is unreachable here, so ``actions/upload-artifact@v4`` and
``actions/download-artifact@v4`` are the stand-ins in tests/container/actions: the same
inputs, on the same client library (@actions/artifact), bundled with esbuild from the
pinned node_modules. ``actions/checkout`` is skipped by act, which copies the working tree.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.action.comment import compose_body
from retrieval_eval.sharding import Shard
from tests.action.git_repo import commit_all, git, init_repo, write
from tests.action.payloads import pull_request_event
from tests.action.project import CONFIG, SEMANTIC_FIXTURES, fixture_lines, project_files
from tests.action.test_shard_modes import without_timings
from tests.container.runner import (
    record_timing,
    run_act,
    run_container,
    serve_base_commit_files,
)
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

pytestmark = [pytest.mark.container, pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCS = REPO_ROOT / "docs" / "action.md"
STAND_INS = Path(__file__).parent / "actions"
ESBUILD = REPO_ROOT / "node_modules" / ".bin" / "esbuild"
# What a checkout of the Action's repository holds that building its image needs.
ACTION_FILES = ("action.yml", "Dockerfile", ".dockerignore", "pyproject.toml", "README.md")
MARKER = "<!-- retrieval-eval:retrieval-eval -->"
WORKFLOW_NAME = "retrieval-eval.yml"
JOBS = ("embed-1", "embed-2", "evaluate-1", "evaluate-2", "merge")
# Added to the documented merge job: the merged report, as an artifact the test reads.
UPLOAD_MERGED_REPORT = """\
      - uses: actions/upload-artifact@v4
        with:
          name: merged-report
          path: retrieval-eval-report/
"""


def documented_workflow(shards: int) -> str:
    """docs/action.md's sharded workflow, for `shards` shards instead of four."""
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(
        r"`\.github/workflows/retrieval-eval\.yml` with four shards:\n\n```yaml\n(.*?)```",
        text,
        re.DOTALL,
    )
    assert found, "docs/action.md lost the sharded workflow"
    workflow = found.group(1)
    numbers = ", ".join(str(index) for index in range(1, shards + 1))
    assert workflow.count("shard: [1, 2, 3, 4]") == 2
    assert workflow.count("${{ matrix.shard }}/4") == 2
    workflow = workflow.replace("shard: [1, 2, 3, 4]", f"shard: [{numbers}]")
    workflow = workflow.replace("${{ matrix.shard }}/4", f"${{{{ matrix.shard }}}}/{shards}")
    assert workflow.rstrip().endswith("shard-artifacts: partials"), "merge is no longer last"
    return workflow + UPLOAD_MERGED_REPORT


def test_the_documented_workflow_is_the_one_run() -> None:
    workflow = documented_workflow(2)
    assert "shard: [1, 2]" in workflow
    assert "mode: embed-shard" in workflow and "mode: merge" in workflow
    assert "uses: actions/upload-artifact@v4" in workflow
    assert "uses: actions/download-artifact@v4" in workflow
    assert "uses: org/retrieval-eval@v1" in workflow


def bundle_stand_in(name: str, into: Path) -> Path:
    """A runnable copy of a stand-in: its action.yml and main.mjs bundled into dist/."""
    folder = into / name
    folder.mkdir(parents=True)
    shutil.copy(STAND_INS / name / "action.yml", folder / "action.yml")
    assert ESBUILD.is_file(), "node_modules is missing; run `npm ci` (ci-container.sh does)"
    subprocess.run(
        [
            str(ESBUILD),
            str(STAND_INS / name / "main.mjs"),
            "--bundle",
            # node-fetch (under @actions/artifact) recognises an AbortSignal by its class name.
            "--keep-names",
            "--platform=node",
            "--target=node18",
            "--format=cjs",
            "--log-level=warning",
            f"--outfile={folder / 'dist' / 'index.cjs'}",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return folder


def action_source(path: Path) -> Path:
    """What `org/retrieval-eval@v1` resolves to: this checkout's Action, built from source."""
    path.mkdir()
    for name in ACTION_FILES:
        shutil.copy(REPO_ROOT / name, path / name)
    shutil.copytree(REPO_ROOT / "src", path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    return path


def notes_project(path: Path, workflow: str) -> str:
    """The notes project with dense fixtures and the sharded workflow; returns its sha."""
    init_repo(path)
    write(path, project_files())
    write(
        path,
        {
            "datasets/semantic.jsonl": fixture_lines(SEMANTIC_FIXTURES, retrieval_type="semantic"),
            # A loaded machine's query latency must not decide the verdict.
            "retrieval-eval.toml": CONFIG + '"latency_p95_ms" = false\n',
            f".github/workflows/{WORKFLOW_NAME}": workflow,
        },
    )
    # act takes GITHUB_REPOSITORY from the origin remote; nothing is fetched from it.
    git(path, "remote", "add", "origin", "https://github.com/octo/notes.git")
    return commit_all(path, "notes, their golden datasets and the sharded workflow")


def artifact(root: Path, name: str) -> zipfile.ZipFile:
    """An artifact as act's server stored it: <run>/<name>/<name>.zip."""
    [path] = root.glob(f"*/{name}/{name}.zip")
    return zipfile.ZipFile(path)


def job_log(log: str, job: str) -> str:
    """The lines act prefixed with the job's name (padded to the longest job's)."""
    prefix = re.compile(rf"\[{WORKFLOW_NAME.removesuffix('.yml')}/{re.escape(job)} *\]")
    return "\n".join(line for line in log.splitlines() if prefix.match(line))


def run_matrix(
    workspace: Path, event: Path, github: FakeGitHub, runner_image: str, tmp_path: Path, run_id: str
) -> tuple[subprocess.CompletedProcess[str], float, Path]:
    """act runs the workspace's sharded workflow, with the stand-in artifact actions and
    `org/retrieval-eval@v1` built from this checkout; returns the finished process, its
    wall time and the folder act's artifact server stored the artifacts in."""
    stand_ins = tmp_path / "stand-ins"
    upload = bundle_stand_in("upload-artifact", stand_ins)
    download = bundle_stand_in("download-artifact", stand_ins)
    action = action_source(tmp_path / "retrieval-eval@v1")
    artifacts = tmp_path / "artifacts"
    completed, took = run_act(
        WORKFLOW_NAME,
        event=event,
        runner_image=runner_image,
        workspace=workspace,
        home=tmp_path / "act-home",
        api_url=github.base_url,
        run_id=run_id,
        options=[
            "--artifact-server-path",
            str(artifacts),
            "--local-repository",
            f"actions/upload-artifact@v4={upload}",
            "--local-repository",
            f"actions/download-artifact@v4={download}",
            "--local-repository",
            f"org/retrieval-eval@v1={action}",
        ],
        # github.com: @actions/artifact refuses any other server as GitHub Enterprise Server.
        server_url="https://github.com",
        timeout=1200,
    )
    return completed, took, artifacts


def test_act_runs_the_documented_matrix_and_the_merge_equals_an_unsharded_run(
    act_runner_image: str, action_image: str, github: FakeGitHub, tmp_path: Path
) -> None:
    workspace = tmp_path / "notes"
    base = notes_project(workspace, documented_workflow(2))
    git(workspace, "checkout", "-q", "-b", "feature")
    write(workspace, {"datasets/corpus/travel/porto.md": "# Porto\n\nPort wine cellars.\n"})
    head = commit_all(workspace, "a note on Porto")
    github.add_pull(7, head_sha=head, base_sha=base, files=["datasets/corpus/travel/porto.md"])
    serve_base_commit_files(github, workspace, base)
    event = tmp_path / "event.json"
    payload = pull_request_event(number=7, head_sha=head, base_sha=base)
    event.write_text(json.dumps(payload))
    completed, took, artifacts = run_matrix(
        workspace, event, github, act_runner_image, tmp_path, run_id="4242"
    )
    record_timing("act: the sharded matrix (2 embed, 2 evaluate, 1 merge)", took)
    log = completed.stdout + completed.stderr
    assert completed.returncode == 0, log

    # Every job of the matrix ran and succeeded.
    for job in JOBS:
        assert "🏁  Job succeeded" in job_log(log, job), f"{job} did not succeed:\n{log}"
    split = []  # (chunks this shard embedded, chunks in the corpus), per embed job
    for index in (1, 2):
        embedded = re.search(rf"shard {index}/2: (\d+) of (\d+) chunks, \1 embedded", log)
        assert embedded, job_log(log, f"embed-{index}")
        split.append((int(embedded.group(1)), int(embedded.group(2))))
        assert f"shard {index}/2: evaluated " in job_log(log, f"evaluate-{index}"), log
    # Each embed job embedded its own part of the corpus, and the two parts make it whole.
    (first, chunks), (second, also_chunks) = split
    assert chunks == also_chunks and first > 0 and second > 0 and first + second == chunks

    # Artifacts went from job to job through act's artifact server: each embed job
    # uploaded its cache, each evaluate job downloaded both caches and uploaded its
    # partial result, and the merge job downloaded both partials.
    caches = [set(artifact(artifacts, f"embeddings-{i}").namelist()) for i in (1, 2)]
    assert all(any(name.startswith("embeddings/") for name in cache) for cache in caches)
    for index in (1, 2):
        evaluate = job_log(log, f"evaluate-{index}")
        for shard in (1, 2):
            assert f"Artifact embeddings-{shard} downloaded" in evaluate, evaluate
        assert "vectors from 2 cache(s)" in evaluate, evaluate
        assert artifact(artifacts, f"partial-{index}").namelist() == ["partial.json"]
        assert f"Artifact partial-{index} downloaded" in job_log(log, "merge")

    # The merge job, and only it, posted: one comment and one status.
    [comment] = github.comments_on(7)
    assert comment["body"].startswith(MARKER + "\n")
    assert "### semantic.jsonl · dense · 4 queries" in comment["body"]
    [status] = github.statuses_for(head)
    assert (status["state"], status["context"]) == ("success", "retrieval-eval")
    assert status["target_url"] == "https://github.com/octo/notes/actions/runs/4242"
    shown = "\n".join(line for line in log.splitlines() if "::add-mask::" not in line)
    assert TOKEN not in shown

    # The unsharded run: the same image (as `uses: ./` builds it), the same commit, and
    # the embedding cache the evaluate jobs started from (both embed artifacts merged).
    whole = tmp_path / "whole"
    git(tmp_path, "clone", "-q", str(workspace), str(whole))
    for index in (1, 2):
        artifact(artifacts, f"embeddings-{index}").extractall(whole / "embed" / str(index))
    # The image's own console script finds the image's model through RETRIEVAL_EVAL_MODEL_DIR.
    merge = subprocess.run(
        [
            "docker", "run", "--rm", "--network=none", "--entrypoint", "sh",
            "-v", f"{whole}:/github/workspace", "--workdir", "/github/workspace", action_image,
            "-c", "retrieval-eval cache merge --into cache embed/1 embed/2",
        ],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert merge.returncode == 0, merge.stdout + merge.stderr
    unsharded = run_container(
        action_image,
        whole,
        tmp_path / "whole-run",
        event_name="pull_request",
        payload=payload,
        api_url=github.base_url,
        sha=head,
        comment="off",
        cache_dir="cache",
        report_dir="whole-report",
    )
    assert unsharded.returncode == 0, unsharded.log
    merged_dir = tmp_path / "merged"
    artifact(artifacts, "merged-report").extractall(merged_dir)
    merged: dict[str, Any] = without_timings(merged_dir / "report.json")
    assert merged["verdict"] == unsharded.outputs["verdict"] == "baseline-established"
    assert merged == without_timings(whole / "whole-report" / "report.json")


def broken_fixture_for(shard: Shard) -> str:
    """A fixture line only `shard` validates (its query id is the shard's), and rejects:
    `telepathic` is no retrieval type."""
    query_id = next(f"s-broken-{n}" for n in range(100) if shard.holds(f"s-broken-{n}"))
    line = {
        "query_id": query_id,
        "query": "a note nobody wrote",
        "retrieval_type": "telepathic",
        "expected_top_k_ids": ["recipes/risotto"],
        "ground_truth_source": "human-annotated",
    }
    return json.dumps(line) + "\n"


def test_act_a_failed_evaluate_shard_still_gets_the_merge_status_and_comment(
    act_runner_image: str, github: FakeGitHub, tmp_path: Path
) -> None:
    """One evaluate job fails (its own fixture line is invalid), so it uploads no partial.
    The documented matrix still ends the pull request's wait: `fail-fast: false` lets the
    other shard finish, `if: ${{ !cancelled() }}` runs the merge job, and the merge sets an
    `error` status naming the missing shard and updates the Action's comment."""
    workspace = tmp_path / "notes"
    base = notes_project(workspace, documented_workflow(2))
    git(workspace, "checkout", "-q", "-b", "feature")
    semantic = workspace / "datasets" / "semantic.jsonl"
    broken = broken_fixture_for(Shard(2, 2))
    write(workspace, {"datasets/semantic.jsonl": semantic.read_text() + broken})
    head = commit_all(workspace, "a fixture with a retrieval type that does not exist")
    github.add_pull(7, head_sha=head, base_sha=base, files=["datasets/semantic.jsonl"])
    serve_base_commit_files(github, workspace, base)
    # The comment an earlier push of this pull request left (as the Action writes it: the
    # marker, then the hidden line naming the commit it evaluated): the merge must update it.
    earlier = github.add_comment(
        7,
        compose_body("retrieval-eval", "All good.\n", evaluated=base),
        author=github.comment_author,
    )
    event = tmp_path / "event.json"
    event.write_text(json.dumps(pull_request_event(number=7, head_sha=head, base_sha=base)))

    completed, took, artifacts = run_matrix(
        workspace, event, github, act_runner_image, tmp_path, run_id="4244"
    )
    record_timing("act: the sharded matrix with a failed evaluate shard", took)
    log = completed.stdout + completed.stderr
    assert completed.returncode != 0, log

    for job in ("embed-1", "embed-2"):
        assert "🏁  Job succeeded" in job_log(log, job), f"{job} did not succeed:\n{log}"
    # act gives every job of a matrix the matrix's result ("Job failed" for shard 1 too);
    # its steps say what it did: it evaluated its shard and uploaded the partial.
    evaluate = job_log(log, "evaluate-1")
    assert "✅  Success - Main org/retrieval-eval@v1" in evaluate, evaluate
    assert "✅  Success - Main actions/upload-artifact@v4" in evaluate, evaluate
    assert "❌  Failure" not in evaluate, evaluate
    assert artifact(artifacts, "partial-1").namelist() == ["partial.json"]
    # The shard that owns the bad line fails on it, with its FILE:LINE, and uploads nothing.
    evaluate = job_log(log, "evaluate-2")
    assert "❌  Failure - Main org/retrieval-eval@v1" in evaluate, evaluate
    lines = semantic.read_text().count("\n")
    assert f"datasets/semantic.jsonl,line={lines}::field 'retrieval_type'" in evaluate, evaluate
    assert "actions/upload-artifact@v4" not in evaluate.split("Failure - Main org/")[1]
    assert not list(artifacts.glob("*/partial-2")), "the failed shard uploaded a partial"

    # The merge job ran after the failure and failed itself, saying which shard is missing.
    merge = job_log(log, "merge")
    assert "Artifact partial-1 downloaded" in merge, merge
    assert "shard(s) 2/2 missing" in merge, merge
    assert "Comment updated: " in merge, merge
    assert "❌  Failure - Main org/retrieval-eval@v1" in merge, merge
    [status] = github.statuses_for(head)
    assert (status["state"], status["context"]) == ("error", "retrieval-eval")
    assert "shard(s) 2/2 missing" in status["description"], status
    assert status["target_url"] == "https://github.com/octo/notes/actions/runs/4244"
    [comment] = github.comments_on(7)
    assert comment["id"] == earlier["id"]
    assert comment["body"].startswith(MARKER + "\n")
    assert "All good." not in comment["body"]
    assert "shard(s) 2/2 missing" in comment["body"], comment["body"]
    shown = "\n".join(line for line in log.splitlines() if "::add-mask::" not in line)
    assert TOKEN not in shown
