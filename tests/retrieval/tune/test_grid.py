"""`--param` specs → the grid `tune` searches."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import HybridConfig
from retrieval_eval.retrieval.tune.grid import expand_grid, parse_param, settings_label, toml_block


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
