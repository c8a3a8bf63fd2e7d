"""The retrievers' settings ([retrievers.*] of retrieval-eval.toml): each bad value is
refused by `retrieval-eval` naming the file, the key and what to change, before any
search; and the rules the tables check hold for any values (hypothesis)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from retrieval_eval.retrieval.config import (
    HYBRID_SIDES,
    Bm25Config,
    CustomConfig,
    DenseConfig,
    FrameworkConfig,
    HybridConfig,
)
from tests.support.action import run_cli


@pytest.mark.parametrize(
    ("table", "error"),
    [
        (
            "[retrievers.bm25]\nchunk_tokens = 100\nchunk_overlap = 50\n",
            "1: bad value for 'retrievers.bm25': chunk_overlap (50) must be less than half of "
            "chunk_tokens (100), or consecutive chunks would mostly repeat each other",
        ),
        (
            "[retrievers.hybrid]\nweights = { dense = 1.0, colbert = 2.0 }\n",
            "2: bad value for 'retrievers.hybrid.weights': unknown retriever(s) colbert in "
            "weights; hybrid fuses dense and bm25",
        ),
        (
            '[retrievers.hybrid]\nreranker = "custom"\n',
            "1: bad value for 'retrievers.hybrid': reranker = \"custom\" needs a "
            "[retrievers.hybrid.custom] table with `python` (module:factory) or `command`",
        ),
        (
            '[retrievers.custom]\npython = "my_search.make"\n',
            "1: bad value for 'retrievers.custom': python = 'my_search.make' must look like "
            "'package.module:factory'",
        ),
        (
            '[retrievers.dense]\nmodel = "bge-huge"\n',
            "2: bad value for 'retrievers.dense.model': unknown embedding model 'bge-huge'; "
            "available: auto,",
        ),
        ("[retrievers.bm25]\nk_1 = 1.2\n", "2: unknown key 'retrievers.bm25.k_1'; did you mean"),
    ],
)
def test_a_bad_retriever_table_is_refused_naming_the_file_and_key(
    tmp_path: Path, table: str, error: str
) -> None:
    (tmp_path / "retrieval-eval.toml").write_text(table, encoding="utf-8")
    done = run_cli(tmp_path, "validate")
    assert done.returncode == 2, done.log
    # FILE:LINE, the line of the offending key (of its table's header for a table's own check)
    assert f"retrieval-eval.toml:{error}" in done.stderr, done.stderr


_weights = st.dictionaries(
    st.sampled_from([*HYBRID_SIDES, "colbert"]), st.floats(-1, 2, allow_nan=False), max_size=3
)


@given(_weights)
def test_weights_are_accepted_exactly_when_they_fuse_something(weights: dict[str, float]) -> None:
    fine = (
        set(weights) <= set(HYBRID_SIDES)
        and all(w >= 0 for w in weights.values())
        and any(weights.get(side, 1.0) > 0 for side in HYBRID_SIDES)
    )
    if fine:
        config = HybridConfig(fusion="rrf", weights=weights)
        assert {side: config.weight(side) for side in HYBRID_SIDES} == {
            side: weights.get(side, 1.0) for side in HYBRID_SIDES
        }
        assert [s for s in HYBRID_SIDES if config.side_used(s)] == [
            s for s in HYBRID_SIDES if weights.get(s, 1.0) > 0
        ]
    else:
        with pytest.raises(ValidationError):
            HybridConfig(weights=weights)


@given(st.integers(16, 600), st.integers(0, 400))
def test_an_overlap_is_accepted_below_half_the_chunk(cap: int, overlap: int) -> None:
    for model, limit in ((Bm25Config, None), (DenseConfig, 254)):
        if limit is not None and cap > limit:
            continue
        if overlap < cap // 2:
            assert model(chunk_tokens=cap, chunk_overlap=overlap).chunk_overlap == overlap
        else:
            with pytest.raises(ValidationError, match="must be less than half"):
                model(chunk_tokens=cap, chunk_overlap=overlap)


@given(st.sampled_from(["rrf", "convex", "dbsf"]), st.floats(0, 1))
def test_fusion_settings_name_only_what_shapes_the_ranking(fusion: str, alpha: float) -> None:
    config = HybridConfig(fusion=fusion, alpha=alpha)  # type: ignore[arg-type]
    settings = config.fusion_settings()
    expected = {
        "rrf": {"fusion", "depth", "rrf_k", "weights"},
        "dbsf": {"fusion", "depth", "weights"},
        "convex": {"fusion", "depth", "alpha", "normalisation"},
    }[fusion]
    assert set(settings) == expected
    if fusion == "convex":
        assert config.side_used("dense") == (alpha > 0)
        assert config.side_used("bm25") == (alpha < 1)


@given(st.text(max_size=12))
def test_a_reference_needs_a_module_and_an_attribute(spec: str) -> None:
    module, _, attribute = spec.partition(":")
    if module and attribute:
        assert FrameworkConfig(object=spec, id_key="id").object == spec
        assert CustomConfig(python=spec).python == spec
    else:
        with pytest.raises(ValidationError, match=r"must look like 'package\.module:"):
            FrameworkConfig(object=spec, id_key="id")
        with pytest.raises(ValidationError, match=r"must look like 'package\.module:factory'"):
            CustomConfig(python=spec)


def test_a_custom_system_is_a_factory_or_a_command_not_both() -> None:
    with pytest.raises(ValidationError, match="set exactly one of `python`"):
        CustomConfig()
    with pytest.raises(ValidationError, match="set exactly one of `python`"):
        CustomConfig(python="a:b", command=["./search"])
    with pytest.raises(ValidationError, match="command must name a program"):
        CustomConfig(command=[])
