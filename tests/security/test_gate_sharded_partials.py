"""Threat: one `evaluate-shard` job whose Action was tampered with hands `merge` a partial
result that leaves out the queries that regressed (its fingerprints copied from an honest
partial), and the sharded verdict passes a regression.

The shards agreeing with each other is not enough: `merge` reads its own checkout's
datasets and checks each partial against them (the datasets and their bytes, the query ids
in order, the fixtures of the shard's own queries, all of them measured) before it gates.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from typing import Any

import pytest

from retrieval_eval.sharding import Shard
from tests.action.project import REGRESSING_NOTES
from tests.security.harness import Repo, Run

pytestmark = pytest.mark.slow

REGRESSED = {"k-005", "k-006"}  # REGRESSING_NOTES takes their answers away


def drop_regressed(partial: dict[str, Any]) -> None:
    for share in partial["datasets"]:
        share["query_order"] = [q for q in share["query_order"] if q not in REGRESSED]
        for field in ("fixture_records", "retrieval_types"):
            share[field] = {q: v for q, v in share[field].items() if q not in REGRESSED}
        report = share["report"]
        report["queries"] = [q for q in report["queries"] if q["query_id"] not in REGRESSED]


def forge_fixture(partial: dict[str, Any]) -> None:
    """The regressed queries' fixtures now expect what the retriever found instead."""
    for share in partial["datasets"]:
        for query in share["report"]["queries"]:
            if query["query_id"] in REGRESSED:
                record = json.loads(share["fixture_records"][query["query_id"]])
                record["expected_top_k_ids"] = query["retrieved"][:1]
                share["fixture_records"][query["query_id"]] = json.dumps(record, sort_keys=True)


def sharded_regression(repo: Repo, forge: Callable[[dict[str, Any]], None]) -> Run:
    main = repo.establish_baseline()
    repo.branch("feature", main)
    head = repo.commit(REGRESSING_NOTES, "rewrite two notes")
    artifacts = repo.path / ".artifacts"
    (holder,) = {i for i in (1, 2) for q in REGRESSED if Shard(i, 2).holds(q)}
    for index in (1, 2):
        shard = repo.pull_request(
            81, main, head, mode="evaluate-shard", shard=f"{index}/2",
            report_dir=f".artifacts/work-{index}",
        )  # fmt: skip
        assert shard.returncode == 0, shard.log
        handed = artifacts / "partials" / f"partial-{index}"
        shutil.copytree(artifacts / f"work-{index}", handed)
        if index == holder:
            path = handed / "partial.json"
            partial = json.loads(path.read_text(encoding="utf-8"))
            forge(partial)
            path.write_text(json.dumps(partial), encoding="utf-8")
    return repo.pull_request(
        81, main, head, mode="merge", shard_artifacts=".artifacts/partials",
        report_dir=".artifacts/out",
    )  # fmt: skip


@pytest.mark.parametrize("forge", [drop_regressed, forge_fixture], ids=["dropped", "fixtures"])
def test_a_forged_partial_cannot_pass_a_sharded_regression(
    repo: Repo, forge: Callable[[dict[str, Any]], None]
) -> None:
    merged = sharded_regression(repo, forge)

    assert merged.returncode == 2, merged.log
    assert merged.outputs["verdict"] == "error"
    assert "are not this checkout's" in merged.log
    assert merged.statuses[-1]["state"] == "error"
    assert "partial.json" in merged.statuses[-1]["description"]


def test_honest_partials_still_merge_to_the_regression(repo: Repo) -> None:
    merged = sharded_regression(repo, lambda partial: None)

    assert merged.returncode == 1, merged.log
    assert merged.outputs["verdict"] == "regression"
