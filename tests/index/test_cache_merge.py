"""`embed --shard`, `cache merge` and `model install --quantize int8`, via the console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from retrieval_eval.index.embedding import MiniLMEmbedding
from retrieval_eval.index.embedding_cache import EMBEDDINGS_SUBDIR, EmbeddingCache
from retrieval_eval.index.embedding_recipe import embedding_recipe
from retrieval_eval.index.model_catalog import INT8_MODEL
from retrieval_eval.index.model_install import MODEL_SHA256
from retrieval_eval.index.model_quantize import INT8_SHA256

CONSOLE_SCRIPT = str(Path(sys.executable).parent / "retrieval-eval")

NOTES = {
    "kyoto": "# Kyoto in autumn\n\nTemples, maple leaves and the bamboo grove in Arashiyama.\n",
    "lisbon": "# Lisbon\n\nTrams up the hills, pastel de nata and fado in Alfama.\n",
    "tart": "# Lemon tart\n\nA sharp lemon curd in buttery pastry, baked until just set.\n",
    "deploy": "# Deploys\n\nSwitch the router between two identical environments.\n",
    "habits": "# Atomic Habits\n\nSmall habits compound; make cues obvious.\n",
    "marathon": "# Marathon week 12\n\nThirty kilometres, sore calves, too much pasta.\n",
}
QUERIES = [
    ("s-1", "old shrines in Japan in the fall", "kyoto"),
    ("s-2", "Portuguese custard pastries and trams", "lisbon"),
    ("s-3", "citrus dessert", "tart"),
    ("s-4", "zero-downtime releases", "deploy"),
]


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CONSOLE_SCRIPT, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "CI": "true"},
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for name, text in NOTES.items():
        path = root / "datasets" / "corpus" / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    lines = [
        {
            "query_id": qid,
            "query": query,
            "retrieval_type": "semantic",
            "expected_top_k_ids": [doc],
            "ground_truth_source": "human-annotated",
        }
        for qid, query, doc in QUERIES
    ]
    (root / "datasets" / "semantic.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    (root / "retrieval-eval.toml").write_text(
        'min_fixtures = 3\nmin_human = 1\n[dataset_retrievers]\n"semantic.jsonl" = "dense"\n'
        '[thresholds]\n"mrr@10" = false\n"ndcg@10" = false\n"p@5" = false\n'
        '"latency_p95_ms" = false\n',
        encoding="utf-8",
    )
    return root


@pytest.mark.slow
def test_shard_caches_merge_into_one_that_a_run_embeds_nothing_with(project: Path) -> None:
    counts = []
    for index in (1, 2):
        result = cli(project, "embed", "--shard", f"{index}/2", "--cache-dir", f"c{index}")
        assert result.returncode == 0, result.stderr
        assert f"shard {index}/2: " in result.stderr
        with EmbeddingCache(project / f"c{index}" / EMBEDDINGS_SUBDIR) as cache:
            counts.append(len(cache))
    assert sum(counts) == len(NOTES)  # each note is one chunk, in exactly one shard

    merged = cli(project, "cache", "merge", "--into", "all", "c1", "c2")
    assert merged.returncode == 0, merged.stderr
    assert f"merged 2 cache(s) into all: {len(NOTES)} new vectors, {len(NOTES)} in all" in (
        merged.stderr
    )
    again = cli(project, "cache", "merge", "--into", "all", "c2", "c1")
    assert again.returncode == 0, again.stderr
    assert f"0 new vectors, {len(NOTES)} in all" in again.stderr

    run = cli(project, "run", "--quiet", "--cache-dir", "all")
    assert run.returncode == 0, run.stderr
    [dataset] = json.loads((project / "retrieval-eval-report" / "report.json").read_text())[
        "datasets"
    ]
    # Only the queries went through the model (the shards embed chunks alone): every chunk
    # came from the merged cache.
    assert (dataset["embedded_texts"], dataset["cached_embeddings"]) == (len(QUERIES), len(NOTES))


@pytest.mark.slow
def test_shard_caches_of_another_model_merge_with_that_model_named(project: Path) -> None:
    """With `[retrievers.dense] model` set, the shards embed with that model and
    `cache merge --model` checks the caches against it; the default model is refused."""
    config = project / "retrieval-eval.toml"
    config.write_text(
        config.read_text(encoding="utf-8")
        + '[retrievers.dense]\nmodel = "paraphrase-MiniLM-L3-v2"\n',
        encoding="utf-8",
    )
    for index in (1, 2):
        result = cli(project, "embed", "--shard", f"{index}/2", "--cache-dir", f"c{index}")
        assert result.returncode == 0, result.stderr
    refused = cli(project, "cache", "merge", "--into", "all", "c1", "c2")
    assert refused.returncode == 2 and "holds vectors of another model" in refused.stderr
    merged = cli(
        project, "cache", "merge", "--model", "paraphrase-MiniLM-L3-v2", "--into", "all", "c1", "c2"
    )
    assert merged.returncode == 0, merged.stderr
    assert f"{len(NOTES)} new vectors, {len(NOTES)} in all" in merged.stderr
    run = cli(project, "run", "--quiet", "--cache-dir", "all")
    assert run.returncode == 0, run.stderr
    [dataset] = json.loads((project / "retrieval-eval-report" / "report.json").read_text())[
        "datasets"
    ]
    assert dataset["cached_embeddings"] == len(NOTES)


def test_cache_merge_refuses_a_cache_of_another_model(project: Path) -> None:
    with EmbeddingCache(project / "other" / EMBEDDINGS_SUBDIR) as cache:
        cache.put_many("0" * 64, {"a text": np.ones(384, dtype=np.float32)})
    result = cli(project, "cache", "merge", "--into", "all", "other")
    assert result.returncode == 2
    assert f"holds vectors of another model (sha256 {'0' * 64})" in result.stderr
    assert not (project / "all").exists()


@pytest.mark.slow
def test_embed_without_a_shard_fills_the_whole_cache(project: Path) -> None:
    first = cli(project, "embed", "--cache-dir", "c")
    assert first.returncode == 0, first.stderr
    assert f"{len(NOTES)} of {len(NOTES)} chunks: {len(NOTES)} embedded, 0 already cached" in (
        first.stderr
    )
    second = cli(project, "embed", "--cache-dir", "c")
    assert f"0 embedded, {len(NOTES)} already cached" in second.stderr


@pytest.mark.slow  # builds and quantizes the model (about a minute)
def test_int8_model_installs_pinned_and_embeds_close_to_fp32(
    tmp_path: Path, model_dir: Path
) -> None:
    target = tmp_path / "int8"
    result = cli(tmp_path, "model", "install", "--quantize", "int8", "--dir", str(target))
    assert result.returncode == 0, result.stderr
    assert f"(sha256 {INT8_SHA256})" in result.stdout
    assert INT8_SHA256 != MODEL_SHA256  # so every fingerprint tells the models apart
    assert cli(tmp_path, "model", "verify", INT8_MODEL, "--dir", str(target)).returncode == 0
    again = cli(tmp_path, "model", "install", "--quantize", "int8", "--dir", str(target))
    assert "already installed" in again.stdout

    texts = [text for text in NOTES.values()]
    fp32 = MiniLMEmbedding(model_dir).embed(texts)
    int8 = MiniLMEmbedding(target, model=INT8_MODEL).embed(texts)
    cosine = np.sum(fp32 * int8, axis=1)
    # Per-channel int8 with the int8 word-piece table: 0.9903 at least on these notes
    # (0.991 with the table kept), 0.994 on average on 256-token passages; the per-tensor
    # quantization it replaced averaged 0.92 on passages.
    assert cosine.min() > 0.99


@pytest.mark.slow
def test_every_command_finds_the_model_named_by_the_image(project: Path, tmp_path: Path) -> None:
    """Inside the container image HOME is fresh and empty; the image names its model folder
    in RETRIEVAL_EVAL_MODEL_DIR, and the command-line tools must find it there."""
    from retrieval_eval.index.model_install import default_model_dir

    empty_home = tmp_path / "home"
    empty_home.mkdir()
    image = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(empty_home),
        "CI": "true",
        "RETRIEVAL_EVAL_MODEL_DIR": str(default_model_dir(Path.home())),
    }

    def in_image(*args: str, env: dict[str, str] = image) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CONSOLE_SCRIPT, *args], cwd=project, capture_output=True, text=True, env=env
        )

    assert in_image("model", "path").stdout.strip() == image["RETRIEVAL_EVAL_MODEL_DIR"]
    verify = in_image("model", "verify")
    assert verify.returncode == 0, verify.stderr
    assert MODEL_SHA256 in verify.stdout
    for index in (1, 2):
        embed = in_image("embed", "--shard", f"{index}/2", "--cache-dir", f"c{index}")
        assert embed.returncode == 0, embed.stderr
    merged = in_image("cache", "merge", "--into", "all", "c1", "c2")
    assert merged.returncode == 0, merged.stderr
    run = in_image("run", "--quiet", "--cache-dir", "all")
    assert run.returncode == 0, run.stderr

    # Without the variable, the same fresh HOME has no model: the variable is what found it.
    bare = {name: value for name, value in image.items() if name != "RETRIEVAL_EVAL_MODEL_DIR"}
    missing = in_image("cache", "merge", "--into", "again", "c1", env=bare)
    assert missing.returncode == 2
    assert str(empty_home) in missing.stderr


def _report(project: Path) -> dict[str, Any]:
    [dataset] = json.loads((project / "retrieval-eval-report" / "report.json").read_text())[
        "datasets"
    ]
    found: dict[str, Any] = dataset
    return found


@pytest.mark.slow
def test_a_warm_run_embeds_nothing_and_a_changed_note_only_itself(project: Path) -> None:
    """Queries are cached like passages: the second run embeds nothing, and its latencies
    still count each query's embedding seconds (recorded when it was embedded). Changing
    one note re-embeds that note alone. The first run says what it will embed, and about
    how long it will take, before it starts."""
    first = cli(project, "run", "--cache-dir", "cache")
    assert first.returncode == 0, first.stderr
    assert "indexing for dense: embedding 6 documents (6 texts), about " in first.stderr
    one = _report(project)
    assert (one["embedded_texts"], one["cached_embeddings"]) == (len(NOTES) + len(QUERIES), 0)

    second = cli(project, "run", "--cache-dir", "cache")
    assert second.returncode == 0, second.stderr
    assert "indexing for dense: embedding" not in second.stderr  # nothing to embed, no estimate
    two = _report(project)
    assert (two["embedded_texts"], two["cached_embeddings"]) == (0, len(NOTES) + len(QUERIES))
    with EmbeddingCache(project / "cache" / EMBEDDINGS_SUBDIR) as cache:
        timed = cache.get_timed(
            MODEL_SHA256,
            [query for _, query, _ in QUERIES],
            recipe=embedding_recipe(MODEL_SHA256, role="query"),
        )
    assert len(timed) == len(QUERIES)
    texts = {qid: query for qid, query, _ in QUERIES}
    for query in two["queries"]:
        recorded_ms = timed[texts[query["query_id"]]][1] * 1000
        assert recorded_ms > 0 and query["latency_ms"] >= recorded_ms

    note = project / "datasets" / "corpus" / "tart.md"
    note.write_text("# Lemon tart\n\nA sharp lemon curd, baked in a sweet crust.\n")
    third = cli(project, "run", "--cache-dir", "cache")
    assert third.returncode in (0, 1), third.stderr
    assert "indexing for dense: embedding 1 of 6 texts (the rest are in the cache), about " in (
        third.stderr
    )
    three = _report(project)
    assert (three["embedded_texts"], three["cached_embeddings"]) == (
        1,
        len(NOTES) - 1 + len(QUERIES),
    )
