"""The files a run leaves for the commit step: a file the run did not write must come out of
the evaluation as it went in, or it is put back and the run is an error. (A baseline the run
wrote is checked against its report: tests/security/test_files_baseline_written.py and every
baseline-establishing run of the action tests go through it.)"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.action.written_files import Snapshot, check


def test_an_untouched_file_passes(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"datasets": {}}')
    snapshot = Snapshot.take([baseline, tmp_path / "history.jsonl", None])
    assert check(snapshot, baseline=baseline, report=None) is None


def test_a_changed_file_is_put_back_and_named(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"datasets": {"a": null}}')
    snapshot = Snapshot.take([baseline])
    baseline.write_text('{"datasets": {}}')

    error = check(snapshot, baseline=baseline, report=None)

    assert error is not None and error.file == str(baseline)
    assert "changed during the run, not by retrieval-eval" in str(error)
    assert baseline.read_text() == '{"datasets": {"a": null}}'


def test_a_file_that_appeared_is_removed(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    snapshot = Snapshot.take([history])
    history.write_text('{"commit": "forged"}\n')

    assert check(snapshot, baseline=tmp_path / "baseline.json", report=None) is not None
    assert not history.exists()


@given(before=st.binary(max_size=64), after=st.binary(max_size=64))
def test_any_change_of_bytes_is_caught_and_undone(before: bytes, after: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "baseline.json"
        path.write_bytes(before)
        snapshot = Snapshot.take([path])
        path.write_bytes(after)
        error = check(snapshot, baseline=path, report=None)
        assert (error is None) == (before == after)
        assert path.read_bytes() == before
