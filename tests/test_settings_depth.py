"""A configuration nested thousands deep is a `FILE: message` error, never a crash.

Arrays and inline tables nested 100,000 deep once reached Python's recursion limit inside
the TOML parser ("unexpected RecursionError (a bug…)"); dotted table headers that deep
parse fine and then reached it in whatever walked the value next. Both are refused when the
file is read, whichever commit it comes from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import ConfigError
from retrieval_eval.settings import MAX_DEPTH, read_settings
from tests.support.action import run_cli


def _read(folder: Path, text: str) -> object:
    (folder / "retrieval-eval.toml").write_text(text, encoding="utf-8")
    return read_settings(workdir=folder, config_file=None, overrides={}, home=folder, cores=1)


def _nested(openers: list[str]) -> str:
    closers = {"[": "]", "{a = ": "}"}
    return "".join(openers) + "1" + "".join(closers[o] for o in reversed(openers))


@settings(max_examples=20, deadline=None)
@given(
    openers=st.lists(st.sampled_from(["[", "{a = "]), min_size=MAX_DEPTH + 1, max_size=1200),
    where=st.sampled_from(["x = ", "[retrievers.custom]\ncommand = ['x']\noptions = "]),
)
def test_values_nested_too_deep_are_a_file_error(
    tmp_path_factory: pytest.TempPathFactory, openers: list[str], where: str
) -> None:
    folder = tmp_path_factory.mktemp("deep")
    with pytest.raises(ConfigError) as raised:
        _read(folder, where + _nested(openers) + "\n")
    assert "nested more than 32 levels deep" in raised.value.message
    assert raised.value.file is not None and raised.value.file.endswith("retrieval-eval.toml")


# Any TOML value a file can hold, nested a little: reading it gives settings or a ConfigError.
_scalars = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.booleans(),
    st.text(max_size=8),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text("abcdefghijk_", min_size=1, max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
_keys = st.sampled_from(
    ["k", "tolerance", "retrievers", "judge", "challengers", "thresholds", "progress", "zz"]
)


@settings(max_examples=80, deadline=None)
@given(table=st.dictionaries(_keys, _values, max_size=4))
def test_any_parsed_configuration_is_settings_or_a_config_error(
    tmp_path_factory: pytest.TempPathFactory, table: dict[str, object]
) -> None:
    folder = tmp_path_factory.mktemp("any")
    lines = [f"{key} = {_toml(value)}" for key, value in table.items()]
    try:
        _read(folder, "\n".join(lines) + "\n")
    except ConfigError as error:
        assert error.message


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # inf and -inf are TOML too
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"


@pytest.mark.parametrize(
    "text",
    [
        "x = " + "[" * 100_000 + "]" * 100_000 + "\n",
        "[" + ".".join(["retrievers", "custom", "options"] + ["a"] * 100_000) + "]\nb = 1\n",
    ],
    ids=["arrays", "dotted-headers"],
)
def test_a_config_nested_100000_deep_is_exit_2_naming_the_file(tmp_path: Path, text: str) -> None:
    (tmp_path / "retrieval-eval.toml").write_text(text, encoding="utf-8")
    done = run_cli(tmp_path, "run")
    assert done.returncode == 2, done.log
    assert re.search(
        r"error: retrieval-eval\.toml(:1)?: values nested more than 32 levels", done.log
    )
    assert "RecursionError" not in done.log
