"""`[challengers.NAME]` tables as the configuration file gives them: each one is a retriever
name, optionally some datasets, and `[retrievers]` tables of its own laid over the run's;
a bad table is refused at its FILE:LINE."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.retrieval.registry import RETRIEVER_NAMES
from retrieval_eval.settings import DEFAULT_DATASET_RETRIEVERS, RunSettings, load_settings
from tests.support.action import run_cli

KINDS = ("dense", "bm25", "like", "hybrid")
NAMES = st.from_regex(r"[a-z][a-z0-9_-]{0,11}", fullmatch=True).filter(
    lambda name: name not in RETRIEVER_NAMES
)
BM25 = st.fixed_dictionaries(
    {},
    optional={
        "k1": st.floats(min_value=0.0, max_value=5.0, allow_nan=False),
        "b": st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
        "stemming": st.booleans(),
    },
)
HYBRID = st.fixed_dictionaries(
    {},
    optional={
        "fusion": st.sampled_from(["rrf", "convex", "dbsf"]),
        "depth": st.integers(min_value=1, max_value=500),
        "alpha": st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
    },
)
CHALLENGER = st.fixed_dictionaries(
    {"retriever": st.sampled_from(KINDS)},
    optional={
        "datasets": st.lists(st.sampled_from(sorted(DEFAULT_DATASET_RETRIEVERS)), unique=True),
        "bm25": BM25,
        "hybrid": HYBRID,
    },
)


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return repr(value)


def _toml(run_bm25: dict[str, object], challengers: dict[str, dict[str, object]]) -> str:
    lines = ["[retrievers.bm25]", *(f"{k} = {_value(v)}" for k, v in run_bm25.items()), ""]
    for name, table in challengers.items():
        lines.append(f'[challengers."{name}"]')
        lines += [f"{k} = {_value(v)}" for k, v in table.items() if not isinstance(v, dict)]
        for sub, values in table.items():
            if isinstance(values, dict):
                lines += ["", f'[challengers."{name}".{sub}]']
                lines += [f"{k} = {_value(v)}" for k, v in values.items()]
        lines.append("")
    return "\n".join(lines)


def _load(text: str) -> RunSettings:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "retrieval-eval.toml").write_text(text, encoding="utf-8")
        return load_settings(workdir=root, config_file=None, overrides={}, home=root, cores=1)


@settings(max_examples=40, deadline=None)
@given(run_bm25=BM25, challengers=st.dictionaries(NAMES, CHALLENGER, max_size=4))
def test_each_challenger_is_the_run_s_retrievers_with_its_own_tables_laid_over(
    run_bm25: dict[str, object], challengers: dict[str, dict[str, object]]
) -> None:
    loaded = _load(_toml(run_bm25, challengers))
    # The gated retriever's settings are the file's [retrievers], whatever the challengers say.
    for key, value in run_bm25.items():
        assert getattr(loaded.retrievers.bm25, key) == value
    assert set(loaded.challengers) == set(challengers)
    for name, table in challengers.items():
        challenger = loaded.challengers[name]
        assert challenger.retriever == table["retriever"]
        assert challenger.datasets == tuple(table.get("datasets", ()))  # type: ignore[arg-type]
        for dataset in DEFAULT_DATASET_RETRIEVERS:
            assert challenger.applies_to(dataset) == (
                not table.get("datasets") or dataset in table["datasets"]  # type: ignore[operator]
            )
        own_bm25 = {**run_bm25, **table.get("bm25", {})}  # type: ignore[dict-item]
        for key, value in own_bm25.items():
            assert getattr(challenger.retrievers.bm25, key) == value
        for key, value in table.get("hybrid", {}).items():  # type: ignore[attr-defined]
            assert getattr(challenger.retrievers.hybrid, key) == value
        # Defaulted and resolved as the run's own tables are (machine defaults included).
        assert challenger.retrievers.dense.model_dir == loaded.retrievers.dense.model_dir
        assert challenger.retrievers.dense.cache_dir == loaded.retrievers.dense.cache_dir


def _refused(tmp_path: Path, text: str) -> str:
    (tmp_path / "retrieval-eval.toml").write_text(text, encoding="utf-8")
    run = run_cli(tmp_path, "run")
    assert run.returncode == 2, run.log
    return run.stderr


def test_an_unknown_retriever_is_refused_at_its_line(tmp_path: Path) -> None:
    stderr = _refused(
        tmp_path,
        'k = 10\n\n[challengers.rrf]\ndatasets = ["hybrid.jsonl"]\nretriever = "hybird"\n',
    )
    assert (
        "retrieval-eval.toml:5: bad value for 'challengers.rrf.retriever': unknown retriever "
        "'hybird'; choose one of: dense, bm25, like, hybrid, custom"
    ) in stderr


def test_an_unknown_dataset_is_refused_at_its_line(tmp_path: Path) -> None:
    stderr = _refused(
        tmp_path,
        '[challengers.rrf]\nretriever = "hybrid"\n\n[challengers.rrf.hybrid]\nfusion = "rrf"\n'
        '\n[challengers.stem]\nretriever = "bm25"\ndatasets = ["keyword.jsonl", "semantc.jsonl"]\n',
    )
    assert (
        "retrieval-eval.toml:9: challenger 'stem': unknown dataset 'semantc.jsonl' in datasets; "
        "the datasets are those [dataset_retrievers] names: hybrid.jsonl, keyword.jsonl, "
        "semantic.jsonl"
    ) in stderr


def test_a_bad_setting_inside_a_challenger_s_table_is_refused_at_its_line(
    tmp_path: Path,
) -> None:
    stderr = _refused(
        tmp_path,
        '[challengers.rrf]\nretriever = "hybrid"\n\n[challengers.rrf.hybrid]\n'
        'fusion = "rfr"\ndepth = 0\n',
    )
    assert "retrieval-eval.toml:5: bad value for 'challengers.rrf.hybrid.fusion'" in stderr
    assert "retrieval-eval.toml:6: bad value for 'challengers.rrf.hybrid.depth'" in stderr


def test_an_unknown_key_and_a_taken_name_are_refused(tmp_path: Path) -> None:
    stderr = _refused(tmp_path, '[challengers.rrf]\nretriever = "hybrid"\nfusion = "rrf"\n')
    assert (
        "retrieval-eval.toml:3: unknown key 'challengers.rrf.fusion'; a retriever's settings "
        "go in its own table, e.g. [challengers.rrf.hybrid]"
    ) in stderr
    stderr = _refused(tmp_path, '[challengers.bm25]\nretriever = "bm25"\n')
    assert "challenger name 'bm25' is taken" in stderr
