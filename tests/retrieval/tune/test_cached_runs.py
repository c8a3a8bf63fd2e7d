"""Each hybrid side's cached runs re-fused for many settings at once: every setting ranks
exactly as the hybrid retriever's own fusion of the same runs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.retrieval.builtin.hybrid import fuse
from retrieval_eval.retrieval.config import HybridConfig
from retrieval_eval.retrieval.tune.cached_runs import SideRuns
from tests.retrieval.fusion.runs import NORMALISATIONS, runs

_points = st.builds(
    HybridConfig,
    fusion=st.sampled_from(["rrf", "convex", "dbsf"]),
    alpha=st.sampled_from([0.0, 0.3, 0.5, 0.85, 1.0]),
    normalisation=st.sampled_from(NORMALISATIONS),
    rrf_k=st.sampled_from([1, 10, 60]),
    weights=st.fixed_dictionaries({"dense": st.sampled_from([0.0, 0.5, 1.0, 2.0])}),
    depth=st.sampled_from([1, 3, 8]),
)


@given(
    st.lists(st.tuples(runs, runs, st.floats(0.1, 80)), min_size=1, max_size=4),
    st.lists(_points, min_size=1, max_size=6),
    st.integers(1, 10),
)
def test_a_grid_ranks_every_point_as_the_retriever_fuses_it(
    queries: list[tuple[list[tuple[str, float]], list[tuple[str, float]], float]],
    points: list[HybridConfig],
    k: int,
) -> None:
    # tune scores many settings on one query's candidates at once; each setting must
    # rank exactly as the hybrid retriever's own fusion of the same runs.
    runs = {
        "dense": {f"q{i}": dense for i, (dense, _, _) in enumerate(queries)},
        "bm25": {f"q{i}": bm25 for i, (_, bm25, _) in enumerate(queries)},
    }
    ceilings = {
        "dense": {f"q{i}": None for i in range(len(queries))},
        "bm25": {f"q{i}": ceiling for i, (_, _, ceiling) in enumerate(queries)},
    }
    cached = SideRuns(runs=runs, ceilings=ceilings, seconds={})
    grid = cached.grid_rankings(points, k)
    for point, rankings in zip(points, grid, strict=True):
        for i, (dense, bm25, ceiling) in enumerate(queries):
            fused = fuse(point, {"dense": dense, "bm25": bm25}, {"bm25": ceiling})
            assert rankings[f"q{i}"] == [doc for doc, _ in fused[:k]]
