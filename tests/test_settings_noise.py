"""The noise settings as the configuration file gives them: each value in its range is
taken as written, every other one is refused with the key and the file named."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import ConfigError
from retrieval_eval.settings import RunSettings, load_settings


def toml_number(value: float | int) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def load(key: str, value: float | int) -> RunSettings:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "retrieval-eval.toml").write_text(
            f"{key} = {toml_number(value)}\n", encoding="utf-8"
        )
        return load_settings(workdir=root, config_file=None, overrides={}, home=root, cores=1)


def check(key: str, value: float | int, valid: bool) -> None:
    if valid:
        assert getattr(load(key, value), key) == value
        return
    with pytest.raises(ConfigError) as refused:
        load(key, value)
    assert refused.value.message.startswith(f"bad value for '{key}'")
    assert str(refused.value.file).endswith("retrieval-eval.toml")


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_significance_is_a_p_value_strictly_between_0_and_1(value: float) -> None:
    check("significance", value, 0.0 < value < 1.0)


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_max_removed_share_is_a_share(value: float) -> None:
    check("max_removed_share", value, 0.0 <= value <= 1.0)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_max_regressed_queries_and_repeats_are_counts(value: int) -> None:
    check("max_regressed_queries", value, value >= 0)
    check("repeats", value, 1 <= value <= 100)


def test_the_noise_rules_are_off_by_default() -> None:
    defaults = RunSettings()
    assert defaults.significance is None
    assert defaults.max_regressed_queries is None
    assert defaults.repeats == 1
    assert defaults.max_removed_share == 0.5
