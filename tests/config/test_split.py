"""A pull request's settings from both commits, key by key, as the option table says."""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.config.split import from_base, proposals
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.settings import ChallengerConfig, RunSettings


def _retrievers(**tables: object) -> RetrieversConfig:
    return RetrieversConfig.model_validate(tables)


def test_the_retrievers_settings_are_the_pull_requests_and_their_bounds_the_bases() -> None:
    base = RunSettings(retrievers=_retrievers(bm25={"k1": 1.2}, custom={"command": ["./a"]}))
    own = RunSettings(
        retrievers=_retrievers(bm25={"k1": 0.9}, custom={"command": ["./b"], "timeout_s": 3000}),
        secret_env=("MINE",),
    )
    used = from_base(own, base, gate_from_base=True)
    assert used.retrievers.bm25.k1 == 0.9
    assert used.retrievers.custom is not None
    assert used.retrievers.custom.command == ["./b"]
    assert used.retrievers.custom.timeout_s == 120.0


def test_secret_env_is_both_commits_names() -> None:
    base = RunSettings(secret_env=("DEPLOY_*",))
    own = RunSettings(secret_env=("MINE",))
    assert from_base(own, base, gate_from_base=True).secret_env == ("DEPLOY_*", "MINE")


def test_a_challengers_bounds_are_the_base_commits_retriever_tables() -> None:
    base = RunSettings(retrievers=_retrievers(http={"url": "http://ours", "timeout_s": 5}))
    challenger = ChallengerConfig(
        retriever="http",
        retrievers=_retrievers(
            http={"url": "http://theirs", "timeout_s": 900, "headers_env": {"X": "KEY"}}
        ),
    )
    own = RunSettings(challengers={"mine": challenger})
    used = from_base(own, base, gate_from_base=True).challengers["mine"].retrievers.http
    assert used is not None
    assert (used.url, used.timeout_s, used.headers_env) == ("http://ours", 5, {})


def test_every_ignored_change_is_a_proposal() -> None:
    base = RunSettings(tolerance=0.05, judge={"max_cost_usd": 1.0})  # type: ignore[arg-type]
    own = RunSettings(tolerance=0.5, judge={"max_cost_usd": 500.0})  # type: ignore[arg-type]
    used = from_base(own, base, gate_from_base=True)
    assert proposals(own, used, Path("/")) == (
        ("tolerance: 0.05", "0.5"),
        ("judge.max_cost_usd: 1.0", "500.0"),
    )
