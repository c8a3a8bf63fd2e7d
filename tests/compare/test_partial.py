"""One shard's measurements (partial.json) and the checks before their merge: a partial
reads back as written, anything else names the file and what to do, and the merge refuses
partials of another configuration, shard count, corpus, model or dataset file, a shard
given twice and a shard missing. What only says where things are on one machine (folders,
threads) does not change the configuration's fingerprint."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.compare.partial import (
    PARTIAL_FILE,
    Partial,
    PartialDataset,
    check_complete,
    config_fingerprint,
    read_partial,
    write_partial,
)
from retrieval_eval.errors import InputError
from retrieval_eval.settings import RunSettings, load_settings
from tests.render.reports import dataset, query


def settings(workdir: Path, **overrides: object) -> RunSettings:
    return load_settings(
        workdir=workdir, config_file=None, overrides=overrides, home=workdir, cores=2
    )


def partial(settings: RunSettings, index: int, count: int = 2, **changes: object) -> Partial:
    share = PartialDataset(
        report=dataset([query("q1", "lisbon budget")]),
        query_order=("q1",),
        retrieval_types={"q1": "keyword"},
        fixture_records={"q1": "r1"},
        files_sha256="f" * 64,
    )
    fields: dict[str, object] = {
        "shard_index": index,
        "shard_count": count,
        "config_fingerprint": config_fingerprint(settings),
        "corpus_fingerprint": "c1",
        "model_sha256": "m1",
        "datasets": (share,),
    }
    fields.update(changes)
    return Partial.model_validate(fields)


def test_only_what_is_measured_changes_the_configuration_s_fingerprint(tmp_path: Path) -> None:
    plain = config_fingerprint(settings(tmp_path))
    elsewhere = settings(
        tmp_path, cache_dir=tmp_path / "c", report_dir=tmp_path / "r", baseline=tmp_path / "b"
    )
    assert config_fingerprint(elsewhere) == plain
    assert config_fingerprint(settings(tmp_path, k=5)) != plain
    assert config_fingerprint(settings(tmp_path, tolerance=0.1)) != plain


def test_two_checkouts_of_one_configuration_at_different_paths_share_its_fingerprint(
    tmp_path: Path,
) -> None:
    """Every path is taken relative to the repository: a shard on another runner, whose
    workspace is elsewhere, merges. A file outside the repository keeps its absolute path."""
    paths: dict[str, object] = {
        "judged": {"queries": "tier/q.jsonl", "judgments": "tier/j.jsonl"},
        "retrievers": {
            "run_file": {"path": "runs/system.trec"},
            "custom": {"command": ["x"], "cwd": "tools"},
        },
    }
    one, two = (tmp_path / "runner-a" / "repo", tmp_path / "b" / "workspace")
    for root in (one, two):
        root.mkdir(parents=True)
    assert config_fingerprint(settings(one, **paths)) == config_fingerprint(settings(two, **paths))
    moved = {"judged": {"queries": "elsewhere/q.jsonl"}}
    assert config_fingerprint(settings(one, **moved)) != config_fingerprint(settings(two))
    outside = {"judged": {"queries": str(tmp_path / "q.jsonl")}}
    assert config_fingerprint(settings(one, **outside)) == config_fingerprint(
        settings(two, **outside)
    )


# Each setting the fingerprint leaves out, and why: none changes a measured value.
LOCAL = {
    "where the run's time limit stops it": {"time_limit_s": 60},
    "how progress is drawn": {"progress": {"after_s": 9.0}},
    "which outside folders may be read": {"outside_roots": ["/srv/data"]},
    "the baseline's update policy, a push's step": {"baseline_update": "fixed"},
    "where the history is": {"history": "elsewhere.jsonl"},
    "where the model is installed": {"model_dir": "/opt/model"},
    "how long a judge call is waited for": {"judge": {"timeout_s": 5.0, "max_retries": 9}},
    "the dense retriever's machine settings": {
        "retrievers": {"dense": {"threads": 1, "batch_size": 8, "token_budget": 512}}
    },
    "the reranker's cache and patience": {
        "retrievers": {"hybrid": {"claude": {"cache_dir": "/tmp/x", "timeout_s": 1.0}}}
    },
}
# Each that stays in: it changes what is measured or how it is gated.
MEASURED = {
    "results per query": {"k": 5},
    "the seed": {"seed": 7},
    "the measures": {"measures": ["ndcg@10"]},
    "the gate's tolerance": {"tolerance": 0.2},
    "BM25's parameters": {"retrievers": {"bm25": {"k1": 1.2}}},
    "the dense chunking": {"retrievers": {"dense": {"chunk_tokens": 128}}},
    "the judged tier's queries file": {"judged": {"queries": "other.jsonl"}},
    "the judge's model": {"judge": {"model": "claude-sonnet-4-5"}},
    "the names of secrets handed to a retriever": {"secret_env": ["OTHER_KEY"]},
}


@pytest.mark.parametrize("change", LOCAL.values(), ids=LOCAL.keys())
def test_a_setting_that_changes_nothing_measured_is_left_out(
    tmp_path: Path, change: dict[str, object]
) -> None:
    assert config_fingerprint(settings(tmp_path, **change)) == config_fingerprint(
        settings(tmp_path)
    )


@pytest.mark.parametrize("change", MEASURED.values(), ids=MEASURED.keys())
def test_a_setting_that_changes_a_measurement_changes_the_fingerprint(
    tmp_path: Path, change: dict[str, object]
) -> None:
    assert config_fingerprint(settings(tmp_path, **change)) != config_fingerprint(
        settings(tmp_path)
    )


def test_a_challenger_s_machine_settings_are_left_out_and_its_retriever_is_not(
    tmp_path: Path,
) -> None:
    def with_challenger(dense: dict[str, object]) -> str:
        challenger = {"retriever": "dense", "dense": dense}  # as retrieval-eval.toml has it
        return config_fingerprint(settings(tmp_path, challengers={"small": challenger}))

    plain = with_challenger({})
    assert with_challenger({"threads": 1, "cache_dir": "/var/cache/x"}) == plain
    assert with_challenger({"chunk_tokens": 128}) != plain


def test_a_partial_reads_back_as_written_and_anything_else_is_named(tmp_path: Path) -> None:
    made = partial(settings(tmp_path), 1)
    folder = tmp_path / "shard1"
    assert write_partial(made, folder) == folder / PARTIAL_FILE
    assert read_partial(folder) == made
    with pytest.raises(InputError) as raised:
        read_partial(tmp_path / "empty")
    assert "no partial.json here: give the --report-dir of a `retrieval-eval run --shard" in str(
        raised.value
    )
    (folder / PARTIAL_FILE).write_text('{"schema_version": 1}', encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_partial(folder)
    assert "not a partial result of this retrieval-eval version" in str(raised.value)
    assert raised.value.file == str(folder / PARTIAL_FILE)


def test_the_merge_takes_every_shard_once_of_the_same_inputs(tmp_path: Path) -> None:
    mine = settings(tmp_path)
    one, two = tmp_path / "one", tmp_path / "two"
    check_complete([(one, partial(mine, 1)), (two, partial(mine, 2))], mine)
    refusals = [
        (
            [(one, partial(mine, 1)), (two, partial(settings(tmp_path, k=5), 2))],
            "a different configuration",
        ),
        ([(one, partial(mine, 1)), (two, partial(mine, 2, count=3))], "is shard 2/3, but"),
        (
            [(one, partial(mine, 1)), (two, partial(mine, 2, corpus_fingerprint="c2"))],
            "its corpus fingerprint differs",
        ),
        (
            [(one, partial(mine, 1)), (two, partial(mine, 2, model_sha256="m2"))],
            "its model fingerprint differs",
        ),
        ([(one, partial(mine, 1)), (two, partial(mine, 1))], "shard 1/2 is given twice"),
        ([(one, partial(mine, 1))], "shard(s) 2/2 missing: give every shard's report folder"),
        ([], "no shard report folders given"),
    ]
    for partials, message in refusals:
        with pytest.raises(InputError) as raised:
            check_complete(partials, mine)
        assert message in str(raised.value)
    other_file = partial(mine, 2)
    changed = other_file.datasets[0].model_copy(update={"files_sha256": "0" * 64})
    with pytest.raises(InputError, match="its datasets fingerprint differs"):
        check_complete(
            [
                (one, partial(mine, 1)),
                (two, other_file.model_copy(update={"datasets": (changed,)})),
            ],
            mine,
        )
