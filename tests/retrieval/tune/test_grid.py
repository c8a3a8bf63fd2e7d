"""`--param` specs → the grid `tune` searches."""

from __future__ import annotations

import re
import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import Bm25Config, DenseConfig, HybridConfig
from retrieval_eval.retrieval.tune.grid import (
    TUNABLE,
    expand_grid,
    parse_param,
    settings_label,
    toml_block,
)


def test_a_range_includes_both_ends_and_prints_cleanly() -> None:
    name, values = parse_param("alpha=0:1:0.1")
    assert name == "alpha"
    assert values == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def test_lists_and_whole_numbers() -> None:
    assert parse_param("fusion=rrf, convex") == ("fusion", ("rrf", "convex"))
    assert parse_param("rrf_k=10:60:25") == ("rrf_k", (10, 35, 60))
    assert parse_param("weights.dense=1,2,1") == ("weights.dense", (1.0, 2.0))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("alpha", "expected NAME=VALUES"),
        ("beta=0:1:0.1", "expected NAME=VALUES"),
        ("alpha=1:0:0.1", "STOP >= START"),
        ("alpha=0:1:0", "STEP > 0"),
        ("alpha=0:1", "START:STOP:STEP"),
        ("alpha=x,0.5", "not a number"),
        ("alpha=nan", "finite"),
        ("rrf_k=1.5", "whole number"),
        ("fusion=a:b:c", "takes a list"),
        ("fusion=rrf,,convex", "empty value"),
        ("alpha=0:1:0.00001", "at most"),
    ],
)
def test_bad_specs_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_param(text)


@given(st.text(max_size=30))
def test_any_text_parses_or_fails_with_a_config_error(text: str) -> None:
    try:
        name, values = parse_param(text)
    except ConfigError as error:
        assert "--param" in error.message
    else:
        assert values and len(set(values)) == len(values)
        assert name in text


@given(st.integers(0, 20), st.integers(1, 20), st.integers(1, 10))
def test_ranges_count_their_steps(start: int, length: int, step: int) -> None:
    stop = start + length
    _, values = parse_param(f"rrf_k={start + 1}:{stop + 1}:{step}")
    assert values == tuple(range(start + 1, stop + 2, step))


def test_the_grid_keeps_points_that_fuse_differently_once() -> None:
    grid = expand_grid(
        HybridConfig(),
        [parse_param("fusion=rrf,convex"), parse_param("alpha=0:1:0.5")],
    )
    # alpha means nothing to rrf: 1 rrf point and 3 convex points.
    assert [settings_label(point) for point in grid] == [
        "fusion=rrf depth=100 rrf_k=60 weights.dense=1 weights.bm25=1",
        "fusion=convex depth=100 alpha=0 normalisation=theoretical",
        "fusion=convex depth=100 alpha=0.5 normalisation=theoretical",
        "fusion=convex depth=100 alpha=1 normalisation=theoretical",
    ]


def test_grid_points_are_validated_like_the_config_file() -> None:
    with pytest.raises(ConfigError, match="grid point fusion=borda"):
        expand_grid(HybridConfig(), [parse_param("fusion=borda")])
    with pytest.raises(ConfigError, match=r"grid point weights\.dense=-1"):
        expand_grid(HybridConfig(), [parse_param("weights.dense=-1")])
    with pytest.raises(ConfigError, match="given twice"):
        expand_grid(HybridConfig(), [parse_param("alpha=0"), parse_param("alpha=1")])


@pytest.mark.parametrize(
    "settings",
    [
        {"fusion": "rrf", "rrf_k": 20, "weights": {"dense": 1.5}},
        {"fusion": "convex", "alpha": 0.35, "normalisation": "z-score", "depth": 50},
        {"fusion": "dbsf", "weights": {"bm25": 0.5}},
    ],
)
def test_the_printed_block_reproduces_the_settings(settings: dict[str, object]) -> None:
    config = HybridConfig.model_validate(settings)
    table = tomllib.loads(toml_block(config))["retrievers"]["hybrid"]
    assert HybridConfig.model_validate(table).fusion_settings() == config.fusion_settings()


def test_bm25_settings_parse_with_their_own_names_and_values() -> None:
    assert parse_param("k1=0.6:1.2:0.3", "bm25") == ("k1", (0.6, 0.9, 1.2))
    assert parse_param("stopwords=lucene,en-179,none", "bm25") == (
        "stopwords",
        ("lucene", "en-179", False),
    )
    assert parse_param("stemming=true,FALSE", "bm25") == ("stemming", (True, False))
    with pytest.raises(ConfigError, match="not true or false"):
        parse_param("stemming=yes", "bm25")
    with pytest.raises(ConfigError, match="takes a list"):
        parse_param("stemming=0:1:1", "bm25")
    # A hybrid name is not a bm25 setting, and the message lists bm25's.
    with pytest.raises(ConfigError, match="k1, b, stopwords"):
        parse_param("alpha=0.5", "bm25")


def test_a_bm25_grid_is_validated_as_its_table_is_and_pastes_back() -> None:
    grid = expand_grid(
        Bm25Config(b=0.4, stemming=False),
        [parse_param("k1=0.9,1.5", "bm25"), parse_param("stopwords=lucene,none", "bm25")],
    )
    assert [settings_label(point) for point in grid] == [
        "k1=0.9 b=0.4 stopwords=lucene stemming=false chunk_tokens=512 chunk_overlap=64",
        "k1=0.9 b=0.4 stopwords=none stemming=false chunk_tokens=512 chunk_overlap=64",
        "k1=1.5 b=0.4 stopwords=lucene stemming=false chunk_tokens=512 chunk_overlap=64",
        "k1=1.5 b=0.4 stopwords=none stemming=false chunk_tokens=512 chunk_overlap=64",
    ]
    for point in grid:
        table = tomllib.loads(toml_block(point, "bm25"))["retrievers"]["bm25"]
        assert Bm25Config.model_validate(table) == point
    with pytest.raises(ConfigError, match=re.escape("grid point b=1.5: bad value for b")):
        expand_grid(Bm25Config(), [parse_param("b=1.5", "bm25")])
    with pytest.raises(ConfigError, match="less than half of chunk_tokens"):
        expand_grid(DenseConfig(), [parse_param("chunk_tokens=64", "dense")])


@given(st.sampled_from(sorted(TUNABLE)), st.text(max_size=30))
def test_any_text_for_any_retriever_parses_or_fails_with_a_config_error(
    retriever: str, text: str
) -> None:
    try:
        name, values = parse_param(text, retriever)
    except ConfigError as error:
        assert "--param" in error.message
    else:
        assert name in TUNABLE[retriever] and values
