"""Which shard I/N a key belongs to (sharding.py), and the --shard text it is parsed from."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import ConfigError
from retrieval_eval.sharding import parse_shard


# No deadline: the machines these run on are shared, and time is not what is tested.
@settings(deadline=None)
@given(count=st.integers(1, 64), keys=st.lists(st.text(), max_size=50))
def test_every_key_falls_in_exactly_one_shard(count: int, keys: list[str]) -> None:
    shards = [parse_shard(f"{index}/{count}") for index in range(1, count + 1)]
    for key in keys:
        assert sum(shard.holds(key) for shard in shards) == 1


@settings(deadline=None)
@given(st.text())
def test_parse_shard_accepts_exactly_i_of_n(text: str) -> None:
    try:
        shard = parse_shard(text)
    except ConfigError as error:
        assert str(error).startswith(f"--shard {text!r}: ")
    else:
        assert 1 <= shard.index <= shard.count
        assert parse_shard(str(shard)) == shard
