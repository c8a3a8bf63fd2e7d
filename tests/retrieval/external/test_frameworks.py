"""`[retrievers.langchain]` and `[retrievers.llamaindex]` with the frameworks' own packages,
through the console script and the Action: vector store retrievers over `dense`'s chunks
and model land on its NDCG@10 (tag filters passed through as each framework's metadata
filter); LangChain's BM25 retriever, which takes no metadata filter, is refused on a
dataset that filters and evaluated on one that does not; and a wrong id key, an id key
naming no corpus document, and a framework that is not installed each end the run with
one error naming the retriever and the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from retrieval_eval.index.model_install import default_model_dir
from tests.retrieval.external.engine_helpers import (
    DATASETS,
    action_on_repo,
    action_report,
    assert_parity,
    dense_ndcg,
    embeddings_cache,
    engine_mapping,
    failing_run,
    github,
    ndcg,
    run_on_repo,
)
from tests.retrieval.service_helpers import REPO, run_cli
from tests.support.fake_github import FakeGitHub

pytestmark = pytest.mark.slow

__all__ = ["dense_ndcg", "embeddings_cache", "github"]  # fixtures used by name

BUILDERS = "tests.retrieval.external.framework_notes"
VECTOR_STORES = {
    "langchain": f"{BUILDERS}:langchain_vector_store",
    "llamaindex": f"{BUILDERS}:llamaindex_vector_store",
}


def _table(framework: str, embeddings: Path, **keys: str) -> str:
    settings = {"object": VECTOR_STORES[framework], "id_key": "doc_id", "tag_key": "tags", **keys}
    lines = [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    model = default_model_dir(Path.home())
    lines += [f'cwd = "{REPO}"', f'options = {{cache_dir = "{embeddings}", model_dir = "{model}"}}']
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("framework", list(VECTOR_STORES))
def test_a_vector_store_retriever_lands_on_dense(
    framework: str, tmp_path: Path, embeddings_cache: Path, dense_ndcg: dict[str, float]
) -> None:
    report = run_on_repo(tmp_path, framework, _table(framework, embeddings_cache), embeddings_cache)
    assert_parity(report, dense_ndcg)
    config = report["datasets"][0]["retriever_config"]
    assert config["retriever"] == framework
    assert config["object"] == VECTOR_STORES[framework]
    assert config["id_key"] == "doc_id"
    # The fixtures that filter by tags got only documents carrying one of their tags.
    tags = {
        json.loads(line)["query_id"]: json.loads(line).get("filters", {}).get("tags")
        for name in DATASETS
        for line in (REPO / "datasets" / name).read_text().splitlines()
    }
    notes = _note_tags()
    filtered = [
        q
        for d in report["datasets"]
        for q in d["queries"]
        if tags.get(q["query_id"]) and q["retrieved"]
    ]
    assert filtered
    for query in filtered:
        wanted = set(tags[query["query_id"]])
        assert all(notes[doc] & wanted for doc in query["retrieved"]), query


@pytest.mark.parametrize("framework", list(VECTOR_STORES))
def test_the_action_evaluates_a_framework_retriever(
    framework: str,
    tmp_path: Path,
    github: FakeGitHub,
    embeddings_cache: Path,
    dense_ndcg: dict[str, float],
) -> None:
    config = engine_mapping(framework) + f"[retrievers.{framework}]\n"
    config += _table(framework, embeddings_cache)
    result, _ = action_on_repo(tmp_path, github, config)
    assert result.returncode == 0, result.log
    assert result.outputs["verdict"] == "baseline-established", result.log
    assert_parity(action_report(tmp_path), dense_ndcg)


def test_bm25_which_takes_no_filter_is_refused_where_a_fixture_filters(tmp_path: Path) -> None:
    stderr = failing_run(
        tmp_path,
        engine_mapping("langchain")
        + f'[retrievers.langchain]\nobject = "{BUILDERS}:langchain_bm25"\n'
        f'id_key = "doc_id"\ncwd = "{REPO}"\n',
    )
    assert "retrievers.langchain (tests.retrieval.external.framework_notes:langchain_bm25)" in (
        stderr
    )
    assert "a fixture filters by tags, which cannot be passed to BM25Retriever" in stderr
    assert stderr.count("error:") == 1, stderr


def test_bm25_evaluates_a_dataset_without_filters(tmp_path: Path) -> None:
    """The repository's fixtures less those that filter: BM25 over whole notes finds
    most of them (the built-in bm25 stems and weighs titles, so no parity is asked)."""
    datasets = tmp_path / "datasets"
    shutil.copytree(REPO / "datasets" / "corpus", datasets / "corpus")
    for name in DATASETS:
        lines = (REPO / "datasets" / name).read_text().splitlines()
        kept = [line for line in lines if "filters" not in json.loads(line)]
        (datasets / name).write_text("\n".join(kept) + "\n")
    (tmp_path / "retrieval-eval.toml").write_text(
        engine_mapping("langchain")
        + f'[retrievers.langchain]\nobject = "{BUILDERS}:langchain_bm25"\n'
        f'id_key = "doc_id"\ncwd = "{REPO}"\n'
    )
    done = run_cli(
        "run",
        "--datasets",
        str(datasets),
        "--corpus",
        str(datasets / "corpus"),
        "--report-dir",
        str(tmp_path / "report"),
        "--baseline",
        str(tmp_path / "baseline.json"),
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    measured = ndcg(report)
    assert measured["keyword.jsonl"] > 0.7, measured
    assert report["datasets"][0]["retriever_config"]["type"].endswith("BM25Retriever")


def test_a_result_without_the_id_key_names_the_query_and_its_keys(
    tmp_path: Path, embeddings_cache: Path
) -> None:
    table = _table("langchain", embeddings_cache, id_key="source")
    stderr = failing_run(tmp_path, engine_mapping("langchain") + f"[retrievers.langchain]\n{table}")
    assert "retrievers.langchain (" in stderr
    assert "has no metadata key 'source' (its keys: chunk, doc_id, tags)" in stderr
    assert "for the query '" in stderr
    assert "set id_key" in stderr


def test_an_id_key_naming_no_corpus_document_is_refused(
    tmp_path: Path, embeddings_cache: Path
) -> None:
    """The llama_index evaluator's own mistake: node (chunk) ids compared with document ids."""
    table = _table("llamaindex", embeddings_cache, id_key="chunk")
    stderr = failing_run(
        tmp_path, engine_mapping("llamaindex") + f"[retrievers.llamaindex]\n{table}"
    )
    assert "retrievers.llamaindex (" in stderr
    assert "metadata key 'chunk' gives ids such as" in stderr
    assert "none of which is a document of the corpus" in stderr


@pytest.mark.parametrize(
    ("framework", "module", "package"),
    [
        ("langchain", "langchain_core", "langchain-core"),
        ("llamaindex", "llama_index", "llama-index-core"),
    ],
)
def test_a_framework_that_is_not_installed_names_the_extra(
    framework: str, module: str, package: str, tmp_path: Path
) -> None:
    """The framework as a machine without the extra has it: not importable."""
    shadow = tmp_path / "without"
    (shadow / module).mkdir(parents=True)
    (shadow / module / "__init__.py").write_text(f'raise ImportError("No module named {module}")\n')
    stderr = failing_run(
        tmp_path / "run",
        engine_mapping(framework)
        + f'[retrievers.{framework}]\nobject = "{VECTOR_STORES[framework]}"\n'
        f'id_key = "doc_id"\ncwd = "{REPO}"\n',
        env={"PYTHONPATH": str(shadow)},
    )
    assert f"retrievers.{framework}" in stderr
    assert f"{package} is not installed where the factory host runs" in stderr
    assert stderr.count("error:") == 1, stderr
    assert f"pip install 'retrieval-eval[{framework}]'" in stderr


def _note_tags() -> dict[str, set[str]]:
    from retrieval_eval.load.corpus import load_corpus

    return {d.id: set(d.tags) for d in load_corpus(REPO / "datasets" / "corpus").documents}
