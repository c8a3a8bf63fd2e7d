"""The files a run leaves for the commit step: a file the run did not write must come out of
the evaluation as it went in, or it is put back and the run is an error. (A baseline the run
wrote is checked against its report: tests/security/test_files_baseline_written.py and every
baseline-establishing run of the action tests go through it.)"""

from __future__ import annotations

import hashlib
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.action.written_files import Snapshot, changed_files, check
from retrieval_eval.results import JudgedTier, RunReport


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


def _wrote_judgments(text: bytes) -> RunReport:
    """A report saying the run wrote the judgments file with ``text`` (only what ``check``
    reads of it is filled in)."""
    tier = JudgedTier.model_construct(judgments_sha256=hashlib.sha256(text).hexdigest())
    return RunReport.model_construct(baseline_written=False, judged_tier=tier)


def test_judgments_the_run_wrote_pass_and_anything_else_is_put_back(tmp_path: Path) -> None:
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_bytes(b"before\n")
    snapshot = Snapshot.take([judgments])
    judgments.write_bytes(b"the run's\n")
    report = _wrote_judgments(b"the run's\n")
    baseline = tmp_path / "baseline.json"

    assert check(snapshot, baseline=baseline, report=report, judgments=judgments) is None

    judgments.write_bytes(b"the run's\nforged\n")
    error = check(snapshot, baseline=baseline, report=report, judgments=judgments)
    assert error is not None and "differs from the judgments the run wrote" in str(error)
    assert judgments.read_bytes() == b"before\n"
    # A run that wrote none: any change is the retriever's.
    judgments.write_bytes(b"forged\n")
    nothing = RunReport.model_construct(baseline_written=False, judged_tier=None)
    assert check(snapshot, baseline=baseline, report=nothing, judgments=judgments) is not None
    assert judgments.read_bytes() == b"before\n"


def test_the_files_to_commit_are_those_changed_inside_the_repository(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    (workspace / "datasets").mkdir(parents=True)
    kept, changed = workspace / "baseline.json", workspace / "datasets" / "judgments.jsonl"
    outside = tmp_path / "elsewhere.jsonl"
    linked = workspace / "linked.jsonl"
    linked.symlink_to(tmp_path / "target.jsonl")
    kept.write_text("{}")
    snapshot = Snapshot.take([kept, changed, outside, linked])
    for path in (changed, outside, linked):
        path.write_text("new\n")

    inside, elsewhere = changed_files(snapshot, workspace)

    assert inside == ["datasets/judgments.jsonl"]
    assert set(elsewhere) == {outside, linked}
