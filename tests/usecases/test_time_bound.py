"""`@bounded` (usecases/time_bound.py): every use case runs within its settings'
`time_limit_s`, and one that calls another keeps the outer bound. The commands' own tests
end a blocked `run`, `run --shard`, `baseline update` and `merge` through the console
script (tests/test_deadline.py, tests/usecases/test_shards.py, test_baseline.py) and a
blocked shard job through the Action (tests/action/test_shard_modes.py)."""

from __future__ import annotations

import os
import select
from collections.abc import Iterator
from pathlib import Path

import pytest

from retrieval_eval.deadline import TimeLimitError
from retrieval_eval.settings import RunSettings
from retrieval_eval.usecases.shards import embed_shard
from retrieval_eval.usecases.time_bound import bounded
from tests.compare.conftest import Project

# Only a safety net: the bound under test ends every wait long before.
NEVER_S = 60


@pytest.fixture
def never_written() -> Iterator[int]:
    """The reading end of a pipe nothing is written to: waiting on it waits for ever."""
    read_end, write_end = os.pipe()
    yield read_end
    os.close(read_end)
    os.close(write_end)


@bounded
def waits(settings: RunSettings, read_end: int) -> None:
    select.select([read_end], [], [], NEVER_S)


def test_a_bounded_use_case_is_stopped_in_a_wait_that_never_ends(never_written: int) -> None:
    with pytest.raises(TimeLimitError) as stopped:
        waits(RunSettings(time_limit_s=0.05), never_written)
    assert "took longer than time_limit_s (0.05 s)" in stopped.value.message
    assert "raise time_limit_s in the configuration" in stopped.value.message


def test_a_use_case_inside_another_keeps_the_outer_bound(never_written: int) -> None:
    """`baseline update` runs an evaluation: the inner use case ending must not lift the
    outer bound, and the outer one, armed first, is the one that ends the wait."""

    @bounded
    def returns_at_once(settings: RunSettings) -> None:
        pass

    @bounded
    def outer(settings: RunSettings) -> None:
        returns_at_once(RunSettings(time_limit_s=NEVER_S))
        select.select([never_written], [], [], NEVER_S)

    with pytest.raises(TimeLimitError) as stopped:
        outer(RunSettings(time_limit_s=0.05))
    assert "(0.05 s)" in stopped.value.message


def test_embedding_is_bounded(tmp_path: Path, never_written: int) -> None:
    """`embed` and the Action's `embed-shard`: the embedding, then a log line that never
    returns (what a blocked terminal or pipe does), end at `time_limit_s`."""
    project = Project(tmp_path)

    def blocked_log(line: str) -> None:
        select.select([never_written], [], [], NEVER_S)

    settings = project.settings(time_limit_s=1)
    with pytest.raises(TimeLimitError) as stopped:
        embed_shard(settings, None, log=blocked_log, progress=False)
    assert "took longer than time_limit_s (1 s)" in stopped.value.message
