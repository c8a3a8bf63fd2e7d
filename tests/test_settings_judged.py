"""The `[judged]` table: its defaults, its paths made absolute like every other, its keys
the base commit's on a pull request, its judgments file held to the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from retrieval_eval.config.table import commit_of, rows
from retrieval_eval.errors import ConfigError
from retrieval_eval.prepare import check_written_paths
from retrieval_eval.settings import Commit, RunSettings, read_settings


def _settings(root: Path, toml: str = "", **overrides: object) -> RunSettings:
    (root / "retrieval-eval.toml").write_text(toml, encoding="utf-8")
    return read_settings(workdir=root, config_file=None, overrides=overrides)


def test_the_defaults_are_opt_in_and_resolved_under_the_repository(tmp_path: Path) -> None:
    judged = _settings(tmp_path).judged
    assert judged.enabled is False
    assert judged.queries == tmp_path.resolve() / "datasets/judged/queries.jsonl"
    assert judged.judgments == tmp_path.resolve() / "datasets/judged/judgments.jsonl"
    assert (judged.pool_depth, judged.kappa_floor) == (10, 0.6)


def test_the_file_and_a_flag_set_keys_and_keep_the_others(tmp_path: Path) -> None:
    toml = '[judged]\nqueries = "tier/q.jsonl"\nkappa_floor = 0.7\n'
    judged = _settings(tmp_path, toml, judged={"pool_depth": 20}).judged
    assert judged.queries == tmp_path.resolve() / "tier/q.jsonl"
    assert (judged.pool_depth, judged.kappa_floor) == (20, 0.7)
    assert judged.judgments == tmp_path.resolve() / "datasets/judged/judgments.jsonl"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[judged]\njudgments = " "\n', "bad value for 'judged.judgments': empty path"),
        ("[judged]\npool_depth = 0\n", "bad value for 'judged.pool_depth'"),
        ("[judged]\nkappa_floor = 1.5\n", "bad value for 'judged.kappa_floor'"),
        ("[judged]\nfloor = 0.5\n", "unknown key 'judged.floor'"),
        ('[judged]\nqueries = "a\\u0000b"\n', "a path cannot hold a NUL"),
    ],
)
def test_a_bad_value_names_its_key(tmp_path: Path, toml: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)) as raised:
        _settings(tmp_path, toml)
    assert raised.value.line == 2  # the key's line, after the [judged] header


def test_every_key_is_the_base_commit_s() -> None:
    keys = [row.key for row in rows() if row.key.startswith("judged")]
    assert keys == [
        "judged",
        "judged.enabled",
        "judged.queries",
        "judged.judgments",
        "judged.pool_depth",
        "judged.kappa_floor",
    ]
    assert {commit_of(tuple(key.split("."))) for key in keys} == {Commit.BASE}


def test_the_judgments_file_must_stay_inside_the_repository(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    settings = _settings(root, '[judged]\njudgments = "../elsewhere/judgments.jsonl"\n')
    with pytest.raises(ConfigError, match=re.escape("`judged.judgments` must name a path inside")):
        check_written_paths(settings)
    check_written_paths(settings, allowed=(tmp_path / "elsewhere/judgments.jsonl",))


def test_the_tier_s_retriever_is_its_queries_file_s(tmp_path: Path) -> None:
    toml = (
        '[dataset_retrievers]\n"queries.jsonl" = "bm25"\n'
        '[challengers.other]\nretriever = "like"\n'
        '[challengers.keyword-only]\nretriever = "like"\ndatasets = ["keyword.jsonl"]\n'
    )
    settings = _settings(tmp_path, toml)
    assert settings.judged_retriever() == "bm25"
    assert list(settings.judged_challengers()) == ["other"]
    with pytest.raises(
        ConfigError, match=re.escape("no retriever is configured for queries.jsonl")
    ):
        _settings(tmp_path).judged_retriever()
