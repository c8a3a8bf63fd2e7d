"""The retriever contract in retrieval/base.py is the one the run uses, and the retrievers meet it.

Each optional capability is a protocol the run asks for with ``isinstance``. An attribute
probe (``getattr(retriever, "close", None)``) would keep working after a capability was
renamed on one side only, silently dropping it; a protocol no caller asks for is a
capability the run does not have.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from retrieval_eval.retrieval import base, timed
from retrieval_eval.retrieval.config import HybridConfig, RetrieversConfig
from retrieval_eval.retrieval.external.services_config import RunFileConfig
from retrieval_eval.retrieval.registry import build_hybrid, build_retriever, close_retriever
from tests.support.contract import PACKAGE, protocols

# The factory host checks the object a user's factory returned, in the child that holds it:
# it must know that each member is *callable*, to refuse a malformed object with a clear
# message, and a protocol's isinstance checks only that the member exists.
PROBES_ALLOWED = {PACKAGE / "retrieval" / "external" / "factory_host.py"}


def sources() -> list[tuple[Path, ast.AST]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in PACKAGE.rglob("*.py")]


def calls(tree: ast.AST, function: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == function
        and len(node.args) >= 2
    ]


def test_the_contract_declares_each_capability_the_run_uses() -> None:
    members = {name: found[1] for name, found in protocols().items()}
    assert members == {
        "Retriever": ("name", "index", "search", "describe"),
        "Closeable": ("close",),
        "ReportsWarnings": ("warnings",),
        "ReportsMissingQueries": ("queries_missing",),
        "ReportsCollapse": ("collapsed",),
        "SearchesMany": ("search_many",),
        "EmbeddingCounters": ("texts_embedded", "cache_hits"),
        "CountsEmbeddings": ("embedding",),
        "HasReranker": ("reranker",),
        "MeasuresAnnFidelity": ("ann_fidelity",),
        "QueryListRetriever": ("search_queries",),
        "ShowsIndexProgress": ("set_index_progress",),
        "EstimatesIndexing": ("set_index_estimate",),
    }


def test_every_runtime_checkable_protocol_is_asked_for_with_isinstance() -> None:
    asked = set()
    for _, tree in sources():
        for call in calls(tree, "isinstance"):
            kinds = call.args[1]
            for kind in kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]:
                if isinstance(kind, ast.Name):
                    asked.add(kind.id)
    checkable = {name for name, (runtime, _) in protocols().items() if runtime}
    assert checkable - {"Retriever"} - asked == set()
    # The one protocol that is not runtime_checkable is reached only through another.
    assert {name for name, (runtime, _) in protocols().items() if not runtime} == {
        "EmbeddingCounters"
    }


def test_no_module_probes_a_capability_by_attribute_name() -> None:
    """``getattr``/``hasattr`` with an optional capability's member: ask with its protocol."""
    optional = {name: found for name, found in protocols().items() if name != "Retriever"}
    names = {member for _, members in optional.values() for member in members}
    probes = [
        f"{path.relative_to(PACKAGE.parent)}:{call.lineno}: {ast.unparse(call)}"
        for path, tree in sources()
        if path not in PROBES_ALLOWED
        for function in ("getattr", "hasattr")
        for call in calls(tree, function)
        if isinstance(call.args[1], ast.Constant) and call.args[1].value in names
    ]
    assert probes == []


def test_the_built_in_retrievers_have_the_capabilities_the_run_relies_on(
    retrievers_config: RetrieversConfig, tmp_path: Path
) -> None:
    dense = build_retriever("dense", retrievers_config)
    bm25 = build_retriever("bm25", retrievers_config)
    like = build_retriever("like", retrievers_config)
    run_file = build_retriever(
        "run-file",
        retrievers_config.model_copy(update={"run_file": RunFileConfig(path=tmp_path / "run")}),
    )
    hybrid = build_hybrid(retrievers_config, {"dense": dense, "bm25": bm25})
    try:
        capabilities = {
            name: {
                protocol.__name__
                for protocol in (
                    base.Retriever,
                    base.Closeable,
                    base.ReportsWarnings,
                    base.ReportsMissingQueries,
                    base.SearchesMany,
                    base.CountsEmbeddings,
                    base.HasReranker,
                    timed.QueryListRetriever,
                )
                if isinstance(retriever, protocol)
            }
            for name, retriever in {
                "dense": dense,
                "bm25": bm25,
                "like": like,
                "run-file": run_file,
                "hybrid": hybrid,
            }.items()
        }
    finally:
        for retriever in (dense, like, run_file):
            close_retriever(retriever)
    assert capabilities == {
        "dense": {
            "Retriever",
            "Closeable",
            "ReportsWarnings",
            "SearchesMany",
            "CountsEmbeddings",
            "QueryListRetriever",
        },
        "bm25": {"Retriever"},
        "like": {"Retriever", "Closeable"},
        "run-file": {"Retriever", "ReportsMissingQueries", "QueryListRetriever"},
        "hybrid": {
            "Retriever",
            "Closeable",
            "HasReranker",
            "ReportsWarnings",
            "QueryListRetriever",
        },
    }


@pytest.mark.parametrize("sides_given", [True, False])
def test_hybrid_is_built_on_the_sides_given_or_fresh_ones(
    retrievers_config: RetrieversConfig, sides_given: bool
) -> None:
    config = retrievers_config.model_copy(
        update={"hybrid": HybridConfig(fusion="rrf", weights={"dense": 0.0, "bm25": 1.0})}
    )
    bm25 = build_retriever("bm25", config)
    dense = build_retriever("dense", config)
    hybrid = build_hybrid(config, {"dense": dense, "bm25": bm25} if sides_given else None)
    assert isinstance(hybrid, base.HasReranker) and hybrid.reranker is None
    # A side whose weight is 0 is not run at all; the other is the one handed in, or a new one.
    sides = hybrid.sides
    assert list(sides) == ["bm25"]
    assert (sides["bm25"] is bm25) is sides_given
    close_retriever(dense)
