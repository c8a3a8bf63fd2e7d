"""One evaluation split into shards (usecases/shards.py): `embed --shard I/N`,
`run --shard I/N` and `merge` against one unsharded `run`, through the console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.action.git_repo import commit_all, git, init_repo
from tests.compare.conftest import Project
from tests.support.action import run_cli
from tests.support.blocking import left_waiting, never_answering

REPO_ROOT = Path(__file__).resolve().parents[2]
CONSOLE_SCRIPT = str(Path(sys.executable).parent / "retrieval-eval")


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CONSOLE_SCRIPT, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "CI": "true"},
    )


def without_timings(report_json: Path) -> dict[str, Any]:
    """report.json minus what a clock decides: run and setup time, latencies."""
    report = json.loads(report_json.read_text(encoding="utf-8"))
    report.pop("duration_s")
    for compared in report.get("challengers", []):
        compared.pop("latency_p95_ms")
        for challenger in compared["challengers"]:
            challenger.pop("latency_p95_ms")
    for dataset in report["datasets"]:
        dataset.pop("setup_s")
        dataset.pop("latency")
        for query in dataset["queries"]:
            query.pop("latency_ms")
        for row in dataset["rows"]:
            if row["metric"] == "latency_p95_ms":
                for key in ("baseline", "current", "delta", "delta_pct"):
                    row.pop(key)
    return report


def sharded(cwd: Path, count: int, *flags: str, prefix: str = "shard") -> list[Path]:
    folders = []
    for index in range(1, count + 1):
        folder = cwd / f"{prefix}-{index}"
        result = cli(cwd, "run", "--shard", f"{index}/{count}", "--report-dir", str(folder), *flags)
        assert result.returncode == 0, result.stderr
        assert f"shard {index}/{count}: evaluated " in result.stderr
        assert not (folder / "report.json").exists()  # only the merge writes a report
        folders.append(folder)
    return folders


@pytest.mark.slow  # indexes the repository's own notes with the real model, five times
def test_merged_shards_equal_the_unsharded_run_byte_for_byte(tmp_path: Path) -> None:
    """The repository's own datasets: hybrid, bm25 and dense, a baseline to gate against,
    and two challengers (their comparison is made over every shard's queries)."""
    project = tmp_path / "project"
    shutil.copytree(REPO_ROOT / "datasets", project / "datasets")
    shutil.copy(REPO_ROOT / "baseline.json", project / "baseline.json")
    config = (REPO_ROOT / "retrieval-eval.toml").read_text(encoding="utf-8")
    # A loaded machine's latency must not decide the verdict of one side only.
    (project / "retrieval-eval.toml").write_text(
        config.replace("[thresholds]\n", '[thresholds]\n"latency_p95_ms" = false\n', 1)
        + '\n[challengers.rrf]\nretriever = "hybrid"\n\n[challengers.rrf.hybrid]\n'
        'fusion = "rrf"\n\n[challengers.plain]\nretriever = "bm25"\n'
        'datasets = ["keyword.jsonl", "semantic.jsonl"]\n',
        encoding="utf-8",
    )
    cache = ["--cache-dir", str(tmp_path / "cache")]
    # Every run then finds the same cache, so the embedding counts are comparable too.
    assert cli(project, "embed", *cache).returncode == 0
    # The whole run on a copy: the queries it embeds and caches must not be cached for the
    # shards (their counts would differ), which start from the same filled cache.
    shutil.copytree(tmp_path / "cache", tmp_path / "cache-whole")
    whole_cache = ["--cache-dir", str(tmp_path / "cache-whole")]
    whole = cli(project, "run", "--quiet", "--report-dir", str(tmp_path / "whole"), *whole_cache)
    assert whole.returncode in (0, 1), whole.stderr
    folders = sharded(project, 3, *cache)

    merged = cli(
        project,
        "merge",
        "--quiet",
        "--report-dir",
        str(tmp_path / "merged"),
        *map(str, folders),
        *cache,
    )
    assert merged.returncode == whole.returncode, merged.stderr
    assert merged.stderr.splitlines()[-1] == whole.stderr.splitlines()[-1]
    assert without_timings(tmp_path / "merged" / "report.json") == without_timings(
        tmp_path / "whole" / "report.json"
    )
    challenged = json.loads((tmp_path / "merged" / "report.json").read_text())["challengers"]
    assert sorted((d["dataset"], [c["name"] for c in d["challengers"]]) for d in challenged) == [
        ("hybrid.jsonl", ["rrf"]),
        ("keyword.jsonl", ["rrf", "plain"]),
        ("semantic.jsonl", ["rrf", "plain"]),
    ]
    assert all(c["metrics"] and c["warning"] is None for d in challenged for c in d["challengers"])
    # The shards searched disjoint slices that cover every query.
    counts = [
        sum(
            len(d["report"]["queries"])
            for d in json.loads((f / "partial.json").read_text())["datasets"]
        )
        for f in folders
    ]
    report = json.loads((tmp_path / "whole" / "report.json").read_text())
    assert sum(counts) == sum(d["num_queries"] for d in report["datasets"])
    assert all(count > 0 for count in counts)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path / "project")


@pytest.mark.parametrize(
    "count", [1, pytest.param(2, marks=pytest.mark.slow), pytest.param(5, marks=pytest.mark.slow)]
)
def test_merge_equals_run_for_any_shard_count_and_gates_the_same(
    project: Project, count: int
) -> None:
    root = project.root
    assert cli(root, "run", "--quiet").returncode == 0  # establishes the baseline
    baseline = project.baseline_data()
    for query in baseline["datasets"]["keyword.jsonl"]["queries"].values():
        if "ndcg@10" in query["metrics"]:
            query["metrics"]["ndcg@10"] = 1.0  # a baseline this run cannot reach
    project.write_baseline_data(baseline)
    before = project.baseline.read_bytes()

    whole = cli(root, "run", "--quiet", "--report-dir", "whole")
    merged = cli(
        root, "merge", "--quiet", "--report-dir", "merged", *map(str, sharded(root, count))
    )
    assert (whole.returncode, merged.returncode) == (1, 1), merged.stderr
    assert merged.stderr.splitlines()[-1].startswith("Regression: keyword.jsonl NDCG@10 1.000 → ")
    assert without_timings(root / "merged" / "report.json") == without_timings(
        root / "whole" / "report.json"
    )
    assert (root / "merged" / "report.md").read_text().startswith("❌")
    assert project.baseline.read_bytes() == before


@pytest.mark.slow
def test_merge_refuses_a_missing_or_repeated_shard(project: Project) -> None:
    root = project.root
    one, two, three = sharded(root, 3)
    missing = cli(root, "merge", str(one), str(three))
    assert missing.returncode == 2
    assert "shard(s) 2/3 missing: give every shard's report folder" in missing.stderr
    twice = cli(root, "merge", str(one), str(two), str(two), str(three))
    assert twice.returncode == 2
    assert "shard 2/3 is given twice" in twice.stderr
    assert not (root / "retrieval-eval-report" / "report.json").exists()


@pytest.mark.slow
def test_merge_refuses_partials_of_another_config_or_dataset(project: Project) -> None:
    root = project.root
    one, two = sharded(root, 2)
    other_config = cli(root, "merge", "--tolerance", "0.2", str(one), str(two))
    assert other_config.returncode == 2
    assert "made with a different configuration than this merge's" in other_config.stderr

    dataset = project.datasets / "keyword.jsonl"
    dataset.write_text(dataset.read_text().replace("lemon tart pastry", "lemon tart"))
    changed = sharded(root, 2, prefix="changed")[1]
    mixed = cli(root, "merge", str(one), str(changed))
    assert mixed.returncode == 2
    assert "its datasets fingerprint differs from" in mixed.stderr

    three = root / "of-three"
    assert cli(root, "run", "--shard", "2/3", "--report-dir", str(three)).returncode == 0
    other_count = cli(root, "merge", str(one), str(three))
    assert other_count.returncode == 2
    assert "is shard 2/3, but" in other_count.stderr


def test_shards_of_two_clones_at_different_paths_merge_into_the_unsharded_report(
    project: Project, tmp_path: Path
) -> None:
    """Shards on two runners (their workspaces at different paths) of one commit merge;
    a shard made with another k is still refused."""
    root = project.root
    assert cli(root, "run", "--quiet", "--report-dir", "first").returncode == 0  # the baseline
    init_repo(root)
    (root / ".gitignore").write_text("first/\n.retrieval-eval-cache/\n", encoding="utf-8")
    commit_all(root, "notes, datasets and their baseline")
    clone = tmp_path / "runner-b" / "_work" / "notes" / "notes"
    git(tmp_path, "clone", "-q", str(root), str(clone))
    one, two = root / "shard-1", tmp_path / "from-b" / "shard-2"

    assert cli(root, "run", "--shard", "1/2", "--report-dir", str(one)).returncode == 0
    second = cli(clone, "run", "--shard", "2/2", "--report-dir", str(two))
    assert second.returncode == 0, second.stderr
    merged = cli(root, "merge", "--quiet", "--report-dir", "merged", str(one), str(two))
    assert merged.returncode == 0, merged.stderr
    whole = cli(root, "run", "--quiet", "--report-dir", "whole")
    assert whole.returncode == 0, whole.stderr
    assert without_timings(root / "merged" / "report.json") == without_timings(
        root / "whole" / "report.json"
    )
    assert "Passed: no gated metric dropped" in merged.stderr

    other_k = tmp_path / "other-k"
    made = cli(clone, "run", "--shard", "2/2", "--k", "5", "--report-dir", str(other_k))
    assert made.returncode == 0, made.stderr
    refused = cli(root, "merge", "--report-dir", "refused", str(one), str(other_k))
    assert refused.returncode == 2
    assert "made with a different configuration than this merge's" in refused.stderr
    assert not (root / "refused" / "report.json").exists()


def test_merge_of_a_folder_without_a_partial_is_an_error(project: Project) -> None:
    empty = project.root / "empty"
    empty.mkdir()
    result = cli(project.root, "merge", str(empty))
    assert result.returncode == 2
    assert "no partial.json here: give the --report-dir of a `retrieval-eval run --shard I/N`" in (
        result.stderr
    )


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "1/0", "a/b", "1/2/3", ""])
def test_bad_shard_flags_exit_2_naming_the_flag(project: Project, text: str) -> None:
    result = cli(project.root, "run", "--shard", text)
    assert result.returncode == 2
    assert f"--shard {text!r}:" in result.stderr


@pytest.mark.slow
def test_a_bad_fixture_fails_the_sharded_run_with_the_unsharded_runs_message(
    project: Project,
) -> None:
    """A shard validates only its own fixtures: the shard that owns the bad line fails on
    it with the very `FILE:LINE: message` of an unsharded run; a line whose query id cannot
    be read fails every shard."""
    root = project.root
    dataset = project.datasets / "keyword.jsonl"
    lines = dataset.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[2])
    record["expected_top_k_ids"] = ["no/such/note"]
    lines[2] = json.dumps(record)
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = cli(root, "run", "--quiet")
    assert whole.returncode == 1
    problem = next(line for line in whole.stderr.splitlines() if "keyword.jsonl:3:" in line)
    assert "'no/such/note' is not in the corpus" in problem
    shards = [cli(root, "run", "--shard", f"{i}/3", "--report-dir", f"s{i}") for i in (1, 2, 3)]
    failed = [done for done in shards if done.returncode == 1]
    assert len(failed) == 1, [done.stderr for done in shards]
    assert problem in failed[0].stderr.splitlines()
    assert [done.returncode for done in shards].count(0) == 2

    lines[2] = "{not json"
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = cli(root, "run", "--quiet")
    problem = next(line for line in whole.stderr.splitlines() if "keyword.jsonl:3:" in line)
    for i in (1, 2, 3):
        done = cli(root, "run", "--shard", f"{i}/3", "--report-dir", f"t{i}")
        assert done.returncode == 1
        assert problem in done.stderr.splitlines()


@pytest.mark.slow
def test_merged_run_file_shards_equal_the_unsharded_run(tmp_path: Path) -> None:
    """The run-file retriever in shards: each reads the whole run and answers its own
    queries; the merge equals one unsharded run, dataset fingerprint included."""
    root = tmp_path / "project"
    (root / "datasets").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for number in range(30):
            out.write(json.dumps({"id": f"d{number}", "title": "", "text": f"doc {number}"}) + "\n")
    fixtures, run = [], []
    for number in range(60):
        relevant = f"d{(7 * number) % 30}"
        fixture = {
            "query_id": f"q{number}",
            "query": f"query {number}",
            "retrieval_type": "semantic",
            "expected_top_k_ids": [relevant],
            "ground_truth_source": "human-annotated" if number % 3 else "synthetic",
        }
        if number % 4 == 0:
            fixture["tags"] = ["even"]
        fixtures.append(json.dumps(fixture))
        ranked = [f"d{(number + shift) % 30}" for shift in range(5)] + [relevant]
        run += [
            f"q{number} Q0 {doc} {rank} {10 - rank}.5 nightly"
            for rank, doc in enumerate(dict.fromkeys(ranked), start=1)
            if number % 11  # every 11th query is missing from the run
        ]
    (root / "datasets" / "semantic.jsonl").write_text("\n".join(fixtures) + "\n")
    (root / "run.trec").write_text("\n".join(reversed(run)) + "\n")  # lines out of order
    (root / "retrieval-eval.toml").write_text(
        'corpus = "corpus.jsonl"\n[dataset_retrievers]\n"semantic.jsonl" = "run-file"\n'
        '[retrievers.run-file]\npath = "run.trec"\n[thresholds]\n"latency_p95_ms" = false\n',
        encoding="utf-8",
    )
    assert cli(root, "run", "--quiet").returncode in (0, 1)  # establishes the baseline
    whole = cli(root, "run", "--quiet", "--report-dir", "whole")
    merged = cli(root, "merge", "--quiet", "--report-dir", "merged", *map(str, sharded(root, 3)))
    assert whole.returncode in (0, 1), whole.stderr
    assert merged.returncode == whole.returncode, merged.stderr
    assert without_timings(root / "merged" / "report.json") == without_timings(
        root / "whole" / "report.json"
    )


def test_embed_shards_split_the_chunks_and_a_run_embeds_none_of_them(project: Project) -> None:
    """Two embedding shards fill one cache with disjoint halves of the chunks; the run
    after them finds every chunk cached (only its queries are embedded)."""
    config = project.root / "retrieval-eval.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('"keyword.jsonl" = "bm25"', '"keyword.jsonl" = "dense"'))
    selected = []
    for index in (1, 2):
        result = cli(project.root, "embed", "--shard", f"{index}/2")
        assert result.returncode == 0, result.stderr
        line = result.stderr.splitlines()[-1]
        assert line.startswith(f"shard {index}/2: ")
        assert "embedding: " in result.stderr  # the step's count and time, in CI as lines
        selected.append(int(line.split(": ")[1].split(" of ")[0]))
        assert " embedded, 0 already cached (model sha256 " in line
    chunks = int(line.split(" of ")[1].split(" chunks")[0])
    assert sum(selected) == chunks and all(selected)
    run = cli(project.root, "run", "--quiet")
    assert run.returncode in (0, 1), run.stderr  # the verdict is not this test's business
    report = json.loads((project.report_dir / "report.json").read_text(encoding="utf-8"))
    [dataset] = report["datasets"]
    assert dataset["retriever"] == "dense"
    assert dataset["cached_embeddings"] >= chunks
    assert dataset["embedded_texts"] <= dataset["num_queries"]  # the queries alone


def test_a_merge_past_the_time_limit_exits_2_and_leaves_the_baseline(project: Project) -> None:
    """The merge runs no retriever; what can hold it is a read that never returns. Here it
    is git's: the repository's HEAD is a FIFO nobody writes, and `git rev-parse HEAD`
    (the report records the commit) waits on it. `time_limit_s` ends the merge with exit 2
    and the message `run` gives, before the baseline it would have extended is written;
    with HEAD a file again, the same merge extends it."""
    root = project.root
    config = root / "retrieval-eval.toml"
    # In the config from the start: the partials must be of the merge's configuration.
    config.write_text("time_limit_s = 5\n" + config.read_text(encoding="utf-8"), "utf-8")
    subprocess.run(["git", "init", "--quiet", str(root)], check=True)
    assert cli(root, "run", "--quiet").returncode == 0
    baseline = project.baseline_data()
    del baseline["datasets"]["keyword.jsonl"]  # the merge establishes it, and writes
    project.write_baseline_data(baseline)
    before = project.baseline.read_bytes()
    folders = [str(folder) for folder in sharded(root, 2)]
    head = root / ".git" / "HEAD"
    head_text = head.read_bytes()
    head.unlink()
    os.mkfifo(head)

    merged = run_cli(root, "merge", "--quiet", "--report-dir", "merged", *folders)
    assert merged.returncode == 2, merged.log
    assert (
        "error: the evaluation took longer than time_limit_s (5 s) and was stopped in the "
        "step 'deciding the verdict and writing the report'; make that step faster, or raise "
        "time_limit_s in the configuration" in merged.stderr
    )
    assert project.baseline.read_bytes() == before
    assert not (root / "merged" / "report.json").exists()
    assert not left_waiting(head)  # git was stopped with the merge

    head.unlink()
    head.write_bytes(head_text)
    again = run_cli(root, "merge", "--quiet", "--report-dir", "merged", *folders)
    assert again.returncode == 0, again.log
    assert "keyword.jsonl" in project.baseline_data()["datasets"]


def test_an_evaluate_shard_past_the_time_limit_exits_2_with_no_partial(project: Project) -> None:
    """`run --shard` is bounded as `run` is: a retriever that never answers ends it with
    exit 2 and the message naming `time_limit_s`, and no partial result is written."""
    fifo = never_answering(project.root, time_limit_s=2)
    shard = run_cli(project.root, "run", "--shard", "1/2", "--report-dir", "part")
    assert shard.returncode == 2, shard.log
    assert (
        "error: the evaluation took longer than time_limit_s (2 s) and was stopped in the "
        "step 'indexing for custom'" in shard.stderr
    )
    assert not (project.root / "part" / "partial.json").exists()
    assert not left_waiting(fifo)
