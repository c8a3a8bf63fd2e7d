"""`[retrievers.dense] model = "auto"` through the console script: the int8 copy above
10,000 documents, the model the baseline recorded kept, a named model pinned, and a
missing int8 copy named with the command that installs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.index.model_catalog import AUTO_INT8_ABOVE, DEFAULT_MODEL, INT8_MODEL
from retrieval_eval.index.model_install import BUILT_SHA256, default_model_dir

CLI = Path(sys.executable).with_name("retrieval-eval")
LARGE = AUTO_INT8_ABOVE + 1

CONFIG = """\
datasets = "datasets"
corpus = "corpus.jsonl"
min_fixtures = 1
min_human = 1

[dataset_retrievers]
"semantic.jsonl" = "dense"

[thresholds]
"p@5" = false
"ndcg@10" = false
"mrr@10" = false
"latency_p95_ms" = false

[retrievers.dense]
threads = 1
"""


def cli(
    project: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "GITHUB_"))}
    base.pop("CI", None)
    base.pop("RETRIEVAL_EVAL_MODEL_DIR", None)
    return subprocess.run(
        [str(CLI), *args],
        cwd=project,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _project(root: Path, documents: int, model: str | None = None) -> Path:
    """``documents`` one-line notes (the first three about something a query asks for)
    and three queries, with `model` set in the dense table unless None."""
    root.mkdir(parents=True, exist_ok=True)
    topics = ["tidal locking of moons", "sourdough starter feeding", "violin bow rosin"]
    with (root / "corpus.jsonl").open("w") as corpus:
        for number in range(documents):
            text = topics[number] if number < len(topics) else f"note {number}"
            corpus.write(json.dumps({"id": f"d{number}", "title": "", "text": text}) + "\n")
    (root / "datasets").mkdir(exist_ok=True)
    (root / "datasets" / "semantic.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "query_id": f"q{number}",
                    "query": topic,
                    "retrieval_type": "semantic",
                    "expected_top_k_ids": [f"d{number}"],
                    "ground_truth_source": "human-annotated",
                }
            )
            + "\n"
            for number, topic in enumerate(topics)
        )
    )
    set_model(root, model)
    return root


def set_model(root: Path, model: str | None) -> None:
    line = "" if model is None else f'model = "{model}"\n'
    (root / "retrieval-eval.toml").write_text(CONFIG + line)


def _report(project: Path) -> dict[str, Any]:
    return dict(json.loads((project / "retrieval-eval-report" / "report.json").read_text()))


def _model(report: dict[str, Any]) -> tuple[str, str]:
    (dataset,) = report["datasets"]
    config = dataset["retriever_config"]
    return config["model"], config["model_sha256"]


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _project(tmp_path_factory.mktemp("large"), LARGE)


@pytest.mark.slow  # embeds 10,001 short notes (about 15 s)
def test_a_corpus_over_the_threshold_is_embedded_with_the_int8_copy(large: Path) -> None:
    installed = default_model_dir(Path.home()).parent / "onnx-int8"
    assert (installed / "model.onnx").is_file(), "run `retrieval-eval model install`"
    done = cli(large, "run")
    assert done.returncode == 0, done.stderr
    why = f"auto: more than {AUTO_INT8_ABOVE:,} documents"
    assert f"dense model: {INT8_MODEL} ({why}); the corpus has {LARGE:,} documents" in (done.stderr)
    report = _report(large)
    assert _model(report) == (INT8_MODEL, BUILT_SHA256[INT8_MODEL])
    assert report["environment"]["dense_model"] == f"{INT8_MODEL} ({why})"
    assert report["environment"]["model_sha256"] == BUILT_SHA256[INT8_MODEL]
    markdown = (large / "retrieval-eval-report" / "report.md").read_text()
    assert f"| Dense model | — | {INT8_MODEL} ({why}) |" in markdown
    # The baseline records the model chosen, not "auto".
    baseline = json.loads((large / "baseline.json").read_text())
    assert baseline["datasets"]["semantic.jsonl"]["retriever_config"]["model"] == INT8_MODEL


def test_a_missing_int8_copy_is_an_error_naming_its_install_command(
    large: Path, tmp_path: Path
) -> None:
    # Only the FP32 model is installed in this model folder: nothing falls back to it.
    models = tmp_path / "models"
    (models / "onnx").mkdir(parents=True)
    for installed in default_model_dir(Path.home()).iterdir():
        (models / "onnx" / installed.name).symlink_to(installed)
    done = cli(
        large,
        "run",
        "--cache-dir",
        str(tmp_path / "cache"),
        env={"RETRIEVAL_EVAL_MODEL_DIR": str(models / "onnx")},
    )
    assert done.returncode == 2, done.stderr
    assert f"the embedding model {INT8_MODEL} is not installed here" in done.stderr
    assert f"run `retrieval-eval model install {INT8_MODEL}`" in done.stderr


@pytest.mark.slow
def test_a_named_model_is_pinned_and_auto_keeps_the_baselines_model(tmp_path: Path) -> None:
    project = _project(tmp_path / "small", 40, model=INT8_MODEL)
    pinned = cli(project, "run")
    assert pinned.returncode == 0, pinned.stderr
    assert f"dense model: {INT8_MODEL} (set in [retrievers.dense] model)" in pinned.stderr
    assert _model(_report(project)) == (INT8_MODEL, BUILT_SHA256[INT8_MODEL])

    # Back to the default, "auto": 40 documents would choose FP32, but the baseline was
    # made with the int8 copy, so it stays and no recorded setting changes.
    set_model(project, None)
    kept = cli(project, "run")
    assert kept.returncode == 0, kept.stderr
    size = f"{AUTO_INT8_ABOVE:,} documents or fewer"
    why = f"auto: kept from the baseline; {size} would choose {DEFAULT_MODEL}"
    assert f"dense model: {INT8_MODEL} ({why})" in kept.stderr
    report = _report(project)
    assert _model(report) == (INT8_MODEL, BUILT_SHA256[INT8_MODEL])
    assert report["environment"]["dense_model"] == f"{INT8_MODEL} ({why})"

    # `baseline update` measures anew, and so chooses by size again.
    updated = cli(project, "baseline", "update")
    assert updated.returncode == 0, updated.stderr
    assert f"dense model: {DEFAULT_MODEL} (auto: {size})" in updated.stderr
    assert _model(_report(project)) == (DEFAULT_MODEL, BUILT_SHA256[DEFAULT_MODEL])


@pytest.mark.slow
def test_every_shard_and_the_merge_choose_as_the_whole_run(tmp_path: Path) -> None:
    project = _project(tmp_path / "sharded", 40)
    whole = cli(project, "run", "--report-dir", "whole")
    assert whole.returncode == 0, whole.stderr
    folders = []
    for index in (1, 2):
        shard = cli(project, "run", "--shard", f"{index}/2", "--report-dir", f"s{index}")
        assert shard.returncode == 0, shard.stderr
        assert "the corpus has 40 documents" in shard.stderr  # the whole corpus, not a share
        folders.append(f"s{index}")
    merged = cli(project, "merge", "--report-dir", "merged", *folders)
    assert merged.returncode == 0, merged.stderr
    reports = [json.loads((project / f / "report.json").read_text()) for f in ("whole", "merged")]
    lines = {report["environment"]["dense_model"] for report in reports}
    assert lines == {f"{DEFAULT_MODEL} (auto: {AUTO_INT8_ABOVE:,} documents or fewer)"}
    assert {_model(report) for report in reports} == {(DEFAULT_MODEL, BUILT_SHA256[DEFAULT_MODEL])}


@pytest.mark.slow
def test_cache_merge_takes_the_model_whose_vectors_the_shard_caches_hold(tmp_path: Path) -> None:
    project = _project(tmp_path / "caches", 40, model=INT8_MODEL)
    for index in (1, 2):
        embedded = cli(project, "embed", "--shard", f"{index}/2", "--cache-dir", f"c{index}")
        assert embedded.returncode == 0, embedded.stderr
        assert f"(model sha256 {BUILT_SHA256[INT8_MODEL][:12]})" in embedded.stderr
    # No --model: "auto" is the int8 copy here, as the caches hold its vectors.
    merged = cli(project, "cache", "merge", "--into", "merged", "c1", "c2")
    assert merged.returncode == 0, merged.stderr
    assert "merged 2 cache(s) into merged" in merged.stderr
    # Named, the other model refuses them: a run never mixes two models' vectors.
    other = cli(project, "cache", "merge", "--model", DEFAULT_MODEL, "--into", "other", "c1")
    assert other.returncode == 2
    assert "holds vectors of another model" in other.stderr
