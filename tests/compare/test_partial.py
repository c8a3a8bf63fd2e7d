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
