"""The settings layers: defaults < retrieval-eval.toml / pyproject.toml < overrides."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import Bm25Config
from retrieval_eval.settings import DEFAULT_THRESHOLDS, RunSettings, Threshold, load_settings


def _run_in(folder: Path) -> subprocess.CompletedProcess[str]:
    """`retrieval-eval run` in ``folder``, through the console script."""
    return subprocess.run(
        [str(Path(sys.executable).with_name("retrieval-eval")), "run"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )


def load(workdir: Path, **overrides: object) -> RunSettings:
    return load_settings(
        workdir=workdir, config_file=None, overrides=overrides, home=workdir, cores=2
    )


def test_defaults_follow_the_seed(tmp_path: Path) -> None:
    settings = load(tmp_path)
    assert settings.datasets == tmp_path / "datasets"
    assert settings.corpus == tmp_path / "datasets" / "corpus"
    assert settings.baseline == tmp_path / "baseline.json"
    assert settings.report_dir == tmp_path / "retrieval-eval-report"
    assert settings.tolerance == 0.05
    assert settings.dataset_retrievers == {
        "semantic.jsonl": "dense",
        "keyword.jsonl": "bm25",
        "hybrid.jsonl": "hybrid",
    }
    assert settings.thresholds["mrr@10"] == Threshold(min=0.75, datasets=("hybrid.jsonl",))
    assert settings.thresholds["ndcg@10"].min == 0.70
    assert settings.thresholds["p@5"].min == 0.65
    assert settings.thresholds["latency_p95_ms"].max == 500
    assert settings.thresholds["cost_per_query_usd"].max == 0.002
    # Latency and cost are not gated relatively by default (runner timings vary > 5%).
    assert "latency_p95_ms" not in settings.gated
    assert "cost_per_query_usd" not in settings.gated
    assert (settings.min_fixtures, settings.min_human) == (20, 10)


def test_machine_defaults_fill_the_dense_retriever(tmp_path: Path) -> None:
    settings = load(tmp_path)
    model_dir = tmp_path / ".cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx"
    assert settings.model_dir == model_dir
    assert settings.retrievers.dense.model_dir == model_dir
    assert settings.retrievers.dense.cache_dir == tmp_path / ".retrieval-eval-cache" / "embeddings"
    assert settings.retrievers.dense.threads == 2


def test_file_then_overrides(tmp_path: Path) -> None:
    (tmp_path / "retrieval-eval.toml").write_text(
        'tolerance = 0.1\nbaseline = "eval/base.json"\nk = 20\n'
        '[thresholds]\n"p@5" = false\n"ndcg@10" = { min = 0.5 }\n'
        '[dataset_retrievers]\n"keyword.jsonl" = "like"\n'
        "[retrievers.bm25]\nk1 = 1.2\n",
        encoding="utf-8",
    )
    settings = load(tmp_path, tolerance=0.02)
    assert settings.tolerance == 0.02  # the flag beats the file
    assert settings.baseline == tmp_path / "eval" / "base.json"
    assert settings.k == 20
    assert "p@5" not in settings.thresholds  # `false` removes a default threshold
    assert settings.thresholds["ndcg@10"] == Threshold(min=0.5)
    assert settings.thresholds["latency_p95_ms"] == DEFAULT_THRESHOLDS["latency_p95_ms"]
    assert settings.dataset_retrievers["keyword.jsonl"] == "like"
    assert settings.dataset_retrievers["hybrid.jsonl"] == "hybrid"
    assert settings.retrievers.bm25.k1 == 1.2
    assert settings.retrievers.bm25.b == Bm25Config().b  # the default, untouched


def test_pyproject_table_is_read_when_there_is_no_toml_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.retrieval-eval]\ntolerance = 0.03\n', encoding="utf-8"
    )
    assert load(tmp_path).tolerance == 0.03


def test_unknown_key_names_the_key_and_the_file(tmp_path: Path) -> None:
    config = tmp_path / "retrieval-eval.toml"
    config.write_text("tolerence = 0.1\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(tmp_path)
    assert str(caught.value) == f"{config}:1: unknown key 'tolerence'; did you mean 'tolerance'?"


def test_unknown_nested_key_names_its_path(tmp_path: Path) -> None:
    config = tmp_path / "retrieval-eval.toml"
    config.write_text("[retrievers.bm25]\nk_1 = 1.2\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(tmp_path)
    assert str(caught.value) == f"{config}:2: unknown key 'retrievers.bm25.k_1'; did you mean 'k1'?"


def test_bad_value_names_the_key_and_what_is_wrong(tmp_path: Path) -> None:
    config = tmp_path / "retrieval-eval.toml"
    config.write_text("tolerance = 1.5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(tmp_path)
    assert (
        str(caught.value) == f"{config}:1: bad value for 'tolerance': Input should be less than 1"
    )


def test_bad_override_names_the_command_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, k=0)
    assert (
        str(caught.value)
        == "command line: bad value for 'k': Input should be greater than or equal to 1"
    )


def test_threshold_on_an_unmeasured_metric_is_an_error(tmp_path: Path) -> None:
    config = tmp_path / "retrieval-eval.toml"
    config.write_text('[thresholds]\n"map@7" = { min = 0.5 }\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(tmp_path)
    assert str(caught.value).startswith(
        f"{config}:1: bad value for 'thresholds': threshold on 'map@7'"
    )


def test_invalid_toml_is_reported_with_the_file(tmp_path: Path) -> None:
    config = tmp_path / "retrieval-eval.toml"
    config.write_text("tolerance = \n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(tmp_path)
    assert str(caught.value).startswith(f"{config}: not valid TOML")


def test_explicit_config_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(workdir=tmp_path, config_file=Path("nope.toml"), overrides={})
    assert str(caught.value) == f"{tmp_path / 'nope.toml'}: configuration file not found"


def test_settings_are_frozen(tmp_path: Path) -> None:
    settings = load(tmp_path)
    with pytest.raises(ValueError):
        settings.tolerance = 0.5  # type: ignore[misc]


def test_a_dataset_can_have_its_own_threshold(tmp_path: Path) -> None:
    (tmp_path / "retrieval-eval.toml").write_text(
        '[dataset_thresholds."hybrid.jsonl"]\n"ndcg@10" = { min = 0.6 }\n"mrr@10" = false\n',
        encoding="utf-8",
    )
    settings = load(tmp_path)
    assert settings.threshold_for("ndcg@10", "hybrid.jsonl") == Threshold(min=0.6)
    assert settings.threshold_for("ndcg@10", "semantic.jsonl") == Threshold(min=0.7)
    assert settings.threshold_for("mrr@10", "hybrid.jsonl") is None
    assert settings.threshold_for("mrr@10", "semantic.jsonl") is None  # the default is hybrid-only


def test_an_unknown_retriever_for_a_dataset_stops_the_run_before_any_search(
    tmp_path: Path,
) -> None:
    """It was found only when that dataset's turn came, after the others had been searched,
    as "error: unknown retriever 'nope'; ..." naming neither the file nor the key."""
    datasets = tmp_path / "datasets"
    datasets.mkdir()
    (tmp_path / "docs.jsonl").write_text('{"id": "d1", "title": "", "text": "apples"}\n')
    for kind in ("keyword", "semantic"):
        (datasets / f"{kind}.jsonl").write_text(
            json.dumps(
                {
                    "query_id": kind,
                    "query": "apples",
                    "retrieval_type": kind,
                    "expected_top_k_ids": ["d1"],
                    "ground_truth_source": "human-annotated",
                }
            )
            + "\n"
        )
    (tmp_path / "retrieval-eval.toml").write_text(
        'corpus = "docs.jsonl"\nmin_fixtures = 0\nmin_human = 0\n'
        '[dataset_retrievers]\n"semantic.jsonl" = "Dense"\n',
        encoding="utf-8",
    )
    done = _run_in(tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: retrieval-eval.toml:4: bad value for 'dataset_retrievers': "
        "unknown retriever 'Dense' for semantic.jsonl; choose one of: dense, bm25, like, "
        "hybrid, custom, postgres, chroma, http, run-file, qdrant, lancedb, milvus, langchain, "
        "llamaindex\n"
    )


@pytest.mark.parametrize("key", ["history", "report_dir", "corpus"])
def test_an_empty_path_is_a_bad_value(tmp_path: Path, key: str) -> None:
    """Path("") is "."; `history = ""` failed only after every search, as "DIR: cannot read
    the history: Is a directory", and `report_dir = ""` wrote into the repository root."""
    config = tmp_path / "retrieval-eval.toml"
    config.write_text(f'{key} = ""\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(tmp_path)
    assert str(caught.value) == (
        f"{config}:1: bad value for '{key}': empty path; remove the key to use the default"
    )


def test_a_configuration_saved_with_a_bom_is_read(tmp_path: Path) -> None:
    """tomllib refuses a BOM: it was "not valid TOML: Invalid statement (at line 1, column 1)"."""
    (tmp_path / "retrieval-eval.toml").write_bytes(b"\xef\xbb\xbfk = 20\r\ntolerance = 0.1\r\n")
    settings = load(tmp_path)
    assert (settings.k, settings.tolerance) == (20, 0.1)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            "k = 20\n".encode("utf-16"),
            "the file is UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8 "
            "(in PowerShell: Out-File -Encoding utf8)",
        ),
        (b"k = 20\n# caf\xe9\n", "not valid TOML: invalid UTF-8 at line 2; save the file as UTF-8"),
    ],
)
def test_a_configuration_not_in_utf8_names_the_file(
    tmp_path: Path, data: bytes, message: str
) -> None:
    """Both were "unexpected UnicodeDecodeError: ... (a bug in retrieval-eval ...)", exit 2."""
    config = tmp_path / "retrieval-eval.toml"
    config.write_bytes(data)
    done = _run_in(tmp_path)
    # Named as where the user stands names it (the run starts in tmp_path).
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"error: {config.name}: {message}\n",
    )


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            'repository = "/etc"\n',
            "1: unknown key 'repository' (the repository is the folder the run starts in)",
        ),
        (
            '[dataset_thresholds."hybrid.jsonl"]\n"ndcg@10" = { mn = 0.5 }\n',
            """2: unknown key 'dataset_thresholds."hybrid.jsonl"."ndcg@10".mn'""",
        ),
        (
            '[dataset_thresholds."hybrid.jsonl"]\n"ndcg@10" = { min = "high" }\n',
            """2: bad value for 'dataset_thresholds."hybrid.jsonl"."ndcg@10".min'""",
        ),
    ],
    ids=["repository-is-not-a-file-key", "typo-in-a-dataset-threshold", "bad-threshold-value"],
)
def test_a_config_error_names_the_key_as_the_file_spells_it(
    tmp_path: Path, toml: str, message: str
) -> None:
    (tmp_path / "retrieval-eval.toml").write_text(toml, encoding="utf-8")
    done = _run_in(tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"error: retrieval-eval.toml:{message}")
    assert "function-after" not in line


# Settings the property below writes: (table, key, a valid value, an invalid value).
_LINE_KEYS = (
    ((), "k", "10", "0"),
    ((), "tolerance", "0.02", "1.5"),
    ((), "min_fixtures", "0", "-1"),
    (("retrievers", "bm25"), "k1", "1.2", '"high"'),
    (("retrievers", "bm25"), "b", "0.75", "2.0"),
    (("retrievers", "dense"), "batch_size", "16", "0"),
    (("judged",), "pool_depth", "5", "0"),
    (("judged",), "kappa_floor", "0.4", "1.5"),
)


@st.composite
def _config_with_one_bad_value(draw: st.DrawFn) -> tuple[str, str, str, int]:
    """(file name, its text, the bad key as the error names it, that key's line): the
    settings in any order, each table as a `[header]` or as dotted keys, in
    retrieval-eval.toml or pyproject.toml's [tool.retrieval-eval]."""
    chosen = draw(
        st.permutations(_LINE_KEYS).flatmap(
            lambda p: st.sampled_from([p[:n] for n in range(1, len(p) + 1)])
        )
    )
    bad = draw(st.sampled_from(chosen))
    pyproject = draw(st.booleans())
    tables = sorted({table for table, *_ in chosen if table})
    headed = {table for table in tables if draw(st.booleans())}
    prefix = ("tool", "retrieval-eval") if pyproject else ()
    lines: list[str] = ["[project]", 'name = "x"'] if pyproject else []
    wanted = 0

    def emit(text: str, entry: tuple[object, ...]) -> None:
        nonlocal wanted
        lines.append(text)
        if entry is bad:
            wanted = len(lines)

    if pyproject:
        lines.append("[tool.retrieval-eval]")
    for entry in chosen:  # top-level keys and dotted keys come before any header
        table, key, good, wrong = entry
        if table not in headed:
            emit(f"{'.'.join((*table, key))} = {wrong if entry is bad else good}", entry)
    for table in sorted(headed):
        lines.append(f"[{'.'.join((*prefix, *table))}]")
        for entry in chosen:
            if entry[0] == table:
                emit(f"{entry[1]} = {entry[3] if entry is bad else entry[2]}", entry)
    name = "pyproject.toml" if pyproject else "retrieval-eval.toml"
    return name, "\n".join(lines) + "\n", ".".join((*bad[0], bad[1])), wanted


@settings(max_examples=60, deadline=None)
@given(_config_with_one_bad_value())
def test_an_invalid_value_at_any_key_names_the_line_it_is_on(
    case: tuple[str, str, str, int],
) -> None:
    name, text, key, line = case
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / name).write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError) as raised:
            load(root)
    assert str(raised.value).startswith(f"{root / name}:{line}: bad value for '{key}'"), text


def test_a_bad_nested_value_in_pyproject_names_its_line(tmp_path: Path) -> None:
    """Through the console script: [tool.retrieval-eval] in pyproject.toml, a nested table."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.retrieval-eval]\nk = 10\n\n'
        "[tool.retrieval-eval.retrievers.bm25]\nk1 = 1.2\nb = 2.0\n",
        encoding="utf-8",
    )
    done = _run_in(tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(
        "error: pyproject.toml:9: bad value for 'retrievers.bm25.b': "
        "Input should be less than or equal to 1"
    ), done.stderr


def test_a_missing_required_key_names_its_table_header(tmp_path: Path) -> None:
    (tmp_path / "retrieval-eval.toml").write_text(
        'k = 10\n\n[challengers.wide]\ndatasets = ["a.jsonl"]\n', encoding="utf-8"
    )
    done = _run_in(tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(
        "error: retrieval-eval.toml:3: bad value for 'challengers.wide.retriever': "
    ), done.stderr
