"""Fuzzing the two commands that read user files: whatever the datasets and notes hold,
``validate`` and ``run`` end with their documented exit codes and a one-line message,
never a traceback and never "unexpected" (which would be a path no stage handles).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.action.git_repo import write
from tests.action.project import project_files
from tests.security.entry import run_cli

# Text with what breaks naive code: lone surrogates, NUL, control and bidi characters.
NASTY_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=(), min_codepoint=0, max_codepoint=0x10FFFF),
    max_size=40,
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | NASTY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NASTY_TEXT, inner, max_size=4),
    max_leaves=12,
)
FIXTURE_KEYS = [
    "query_id",
    "query",
    "retrieval_type",
    "expected_top_k_ids",
    "ground_truth_source",
    "relevance",
    "tags",
]


def _dumps(value: object) -> bytes:
    # ensure_ascii writes lone surrogates as \\udXXX escapes, as a hostile file would.
    return json.dumps(value, ensure_ascii=True).encode("ascii")


FIXTURE_LINES = st.fixed_dictionaries(
    {},
    optional={key: JSON_VALUES for key in FIXTURE_KEYS},
).map(_dumps)
LINES = st.one_of(
    FIXTURE_LINES,
    JSON_VALUES.map(_dumps),
    st.binary(max_size=60).filter(lambda b: b"\n" not in b),
    st.integers(1, 3000).map(lambda depth: b'{"a": ' + b"[" * depth + b"]" * depth + b"}"),
)
NOTES = st.one_of(
    NASTY_TEXT.map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.binary(max_size=80),
    NASTY_TEXT.map(lambda text: f"---\n{text}\n---\n# T\n\nbody\n".encode("utf-8", "replace")),
)


@contextmanager
def _project(lines: list[bytes], note: bytes) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="retrieval-eval-fuzz-") as scratch:
        yield _fill(Path(scratch), lines, note)


def _fill(folder: Path, lines: list[bytes], note: bytes) -> Path:
    write(folder, project_files())
    dataset = folder / "datasets" / "keyword.jsonl"
    dataset.write_bytes(dataset.read_bytes() + b"\n".join(lines) + b"\n")
    (folder / "datasets" / "corpus" / "fuzz.md").write_bytes(note)
    return folder


def _assert_handled(run_log: str, returncode: int, allowed: set[int]) -> None:
    assert returncode in allowed, run_log
    assert "Traceback" not in run_log, run_log
    assert "unexpected" not in run_log, run_log


FUZZ = settings(
    # Each example is a process; hunting for new failures by hand: FUZZ_EXAMPLES=500.
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "12")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.slow
@FUZZ
@given(lines=st.lists(LINES, min_size=1, max_size=4), note=NOTES)
def test_validate_handles_any_dataset_and_note(lines: list[bytes], note: bytes) -> None:
    with _project(lines, note) as folder:
        run = run_cli(folder, "validate", "--corpus", "datasets/corpus", "datasets")
    _assert_handled(run.log, run.returncode, {0, 1, 2})


@pytest.mark.slow
@FUZZ
@given(lines=st.lists(LINES, min_size=1, max_size=3), note=NOTES)
def test_run_handles_any_dataset_and_note(lines: list[bytes], note: bytes) -> None:
    with _project(lines, note) as folder:
        run = run_cli(folder, "run")
    _assert_handled(run.log, run.returncode, {0, 1, 2})
