"""bench/kappa_sample.py: the simulated judge has the κ asked for, and the standard error
formula agrees with the simulation on a large sample."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "kappa_sample.py"


@pytest.fixture(scope="module")
def ks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kappa_sample", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["kappa_sample"] = module
    spec.loader.exec_module(module)
    return module


def test_the_simulated_kappa_centres_on_the_true_one_with_the_formula_s_spread(
    ks: ModuleType,
) -> None:
    rng = np.random.default_rng(0)
    values = ks.measured(200, 0.6, 2000, rng)
    assert np.nanmean(values) == pytest.approx(0.6, abs=0.01)
    assert np.nanstd(values) == pytest.approx(ks.standard_error(200, 0.6), rel=0.1)


def test_the_standard_error_by_hand(ks: ModuleType) -> None:
    # Both raters half relevant: p_e = 0.5, p_o = 0.8 at κ 0.6; sqrt(0.16 / (20 * 0.25)).
    assert ks.standard_error(20, 0.6) == pytest.approx((0.16 / 5) ** 0.5)


def test_main_prints_one_row_a_size(ks: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    ks.main(["--draws", "200"])
    rows = capsys.readouterr().out.splitlines()
    assert [row.split("|")[1].strip() for row in rows[2:]] == [str(n) for n in ks.SIZES]
