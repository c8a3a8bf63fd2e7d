"""bench/gate_power.py: its statistics and rules on tiny synthetic sets, and one whole run
through the console script on a five-document collection, so the benchmark cannot rot."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from retrieval_eval.compare.gate import relative_drop
from retrieval_eval.score.stats import sign_flip_p_value

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gate_power.py"


@pytest.fixture(scope="module")
def gp() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gate_power", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gate_power"] = module
    spec.loader.exec_module(module)
    return module


def test_relative_drops_are_the_products(gp: ModuleType) -> None:
    base = np.array([10.0, 10.0, 0.0, 0.0, 5.0])
    pr = np.array([9.0, 12.0, 1.0, 0.0, 5.0 + 1e-12])
    drops = gp.relative_drops(base, pr, 20)
    expected = [relative_drop("ndcg@10", b / 20, p / 20) for b, p in zip(base, pr, strict=True)]
    assert drops.tolist() == expected


@pytest.mark.parametrize("diffs", [[-0.1] * 8, [-0.3, 0.1, -0.2, 0.0, -0.05, 0.2, -0.1, -0.1, 0.4]])
def test_the_vectorised_test_matches_the_products_exact_p(
    gp: ModuleType, diffs: list[float]
) -> None:
    # n ≤ 16: the product's p is exact; 40,000 random patterns come within 0.01 of it.
    values = np.array([diffs])
    ours = gp.flip_p(values, gp.sign_patterns(len(diffs), 40_000, 0), "two")[0]
    assert ours == pytest.approx(sign_flip_p_value(values[0]), abs=0.01)


def test_one_sided_p_is_half_of_two_sided_for_a_clear_drop(gp: ModuleType) -> None:
    diffs = np.array([[-0.2, -0.1, -0.3, 0.05, -0.2, -0.1, -0.2, -0.15, 0.1, -0.1]])
    signs = gp.sign_patterns(10, 40_000, 0)
    two, less = gp.flip_p(diffs, signs, "two")[0], gp.flip_p(diffs, signs, "less")[0]
    assert less == pytest.approx(two / 2, abs=0.005)
    assert gp.flip_p(diffs, signs, "greater")[0] > 0.95
    assert gp.flip_p(np.zeros((1, 10)), signs, "two")[0] == 1.0


def _stats(gp: ModuleType, base: list[float], pr: list[float], n_metrics: int = 4) -> object:
    b = np.tile(np.array(base), (n_metrics, 1))
    p = np.tile(np.array(pr), (n_metrics, 1))
    idx = np.arange(len(base))[None, :]
    return gp.draw_stats(b, p, idx, gp.sign_patterns(len(base), 2000, 0))


def test_rules_on_one_set(gp: ModuleType) -> None:
    by_name = {rule.name: rule for rule in gp.rules()}
    # A 3% drop of every metric on 20 queries, one query falling from 0.6 to 0.
    base = [0.5] * 19 + [0.6]
    pr = [0.5] * 19 + [0.6 - 0.03 * sum(base)]
    stats = _stats(gp, base, pr)
    assert stats.drop[0][0] == pytest.approx(0.03)
    assert by_name["P3e_mid2.5_ndcg"].fails(stats)[0]
    assert not by_name["P3d_tol5_head"].fails(stats)[0]
    assert not by_name["P1_tol5_any4"].fails(stats)[0]
    assert by_name["B_band5_flag2.5"].flags(stats)[0]
    assert stats.lost[0] == 0
    # One query of 20 cannot show a drop: the one-sided test does not reject.
    assert not by_name["O1_0_a0.05"].fails(stats)[0]
    # Nor can one query's large loss show that the drop is under 5% (non-inferiority).
    assert by_name["NI_m5_a0.05"].fails(stats)[0]


def test_a_broad_drop_fails_the_tests_and_a_tie_passes_everything(gp: ModuleType) -> None:
    by_name = {rule.name: rule for rule in gp.rules()}
    base = [0.5, 0.6, 0.4, 0.7, 0.5] * 6
    worse = [v * 0.8 for v in base]
    broad = _stats(gp, base, worse)
    for name in ("P1_tol5_any4", "P2_sig05_2sided", "O1_0_a0.05", "NI_m5_a0.05", "C_5_1_a0.2"):
        assert by_name[name].fails(broad)[0], name
    tie = _stats(gp, base, base)
    assert not any(rule.fails(tie)[0] for rule in gp.rules())


def test_rates_bands_and_detectable_drop(gp: ModuleType) -> None:
    effects = np.array([-0.07, -0.15, -0.3, 0.02, 0.1, 0.0])
    fails = np.array([0.25, 0.9, 1.0, 0.1, 0.0, 0.2])
    row = gp.rates(effects, fails)
    assert row["FP5-10"] == pytest.approx(75)
    assert row["FP10-20"] == pytest.approx(10)
    assert row["FP>20"] == pytest.approx(0)
    assert row["FF0-5"] == pytest.approx(15)
    assert row["FF>5"] == pytest.approx(0)
    assert row["near0"] == pytest.approx(20)
    # 80% lies between the 7% (25%) and 15% (90%) bins
    assert 7 < row["D80"] < 15


def test_the_simulated_judge_has_the_kappa_asked_for(gp: ModuleType) -> None:
    rng = np.random.default_rng(1)
    pool = {str(q): {str(d) for d in range(40)} for q in range(200)}
    qrels = {q: {d: 1 for d in docs if rng.random() < 0.2} for q, docs in pool.items()}
    for kappa in (0.4, 0.6, 0.8, 1.0):
        labels = gp.judge_qrels(qrels, pool, kappa, 0)
        pairs = [(q, d) for q in pool for d in pool[q]]
        human = np.array([d in qrels[q] for q, d in pairs])
        judged = np.array([d in labels.get(q, {}) for q, d in pairs])
        assert gp.cohen_kappa(human, judged) == pytest.approx(kappa, abs=0.03)


def test_simulate_separates_a_big_drop_from_a_tie(gp: ModuleType) -> None:
    rng = np.random.default_rng(2)
    good = rng.uniform(0.2, 0.8, size=(4, 60))
    values = np.stack([good, good, good * 0.7])  # variants 0 and 1 tie; 2 is 30% worse
    by_name = {rule.name: rule for rule in gp.rules()}
    wanted = [by_name[name] for name in ("P3e_mid2.5_ndcg", *gp.POOLED)]
    study = gp.simulate(values, wanted, sizes=[20], draws=50, resamples=200, seed=0)
    pairs = gp.changes(3)
    fails = study.fails["P3e_mid2.5_ndcg"][20]
    assert fails[pairs.index((0, 1))] == 0.0
    assert fails[pairs.index((0, 2))] == 1.0
    assert fails[pairs.index((2, 0))] == 0.0
    assert study.effects[pairs.index((0, 2))] == pytest.approx(-0.3)


def test_choose_picks_on_one_collection_and_shows_the_other(gp: ModuleType) -> None:
    def row(fp: float, ff: float) -> dict[int, dict[str, float]]:
        cells = {"FP5-10": fp, "FP10-20": fp / 2, "FF0-5": ff}
        return {25: cells, 100: cells}

    tables = {
        "a": {"good": row(10, 5), "bad": row(60, 2)},
        "b": {"good": row(30, 5), "bad": row(5, 1)},
    }
    text = gp.choose(tables)
    assert text.splitlines()[0].startswith("chosen on a: good")
    assert "checked on b" in text.splitlines()[1]
    assert "chosen on b: bad" in text


def _tiny_collection(root: Path) -> Path:
    beir = root / "tiny" / "beir"
    (beir / "qrels").mkdir(parents=True)
    words = ["wing lift drag", "engine thrust fuel", "heat flux wall", "shock wave mach", "lift"]
    (beir / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": f"d{i}", "title": "", "text": t}) + "\n" for i, t in enumerate(words)
        )
    )
    queries = {"1": "wing lift", "2": "engine fuel", "3": "shock mach", "4": "heat wall"}
    (beir / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items())
    )
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n1\td0\t2\n1\td4\t1\n2\td1\t1\n3\td3\t1\n4\td2\t1\n"
    )
    return beir


@pytest.mark.slow
def test_a_whole_run_through_the_console_script(gp: ModuleType, tmp_path: Path) -> None:
    beir = _tiny_collection(tmp_path)
    out = tmp_path / "rates.json"
    code = gp.main(
        [
            str(beir),
            "--work",
            str(tmp_path / "work"),
            "--variants",
            "bm25,like,bm25_stop_none",
            "--sizes",
            "5",
            "--draws",
            "30",
            "--resamples",
            "100",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    data = json.loads(out.read_text())
    assert data["collection"] == "tiny"
    assert data["queries"] == 4
    assert set(data["rates"]) >= {"P1_tol5_any4", "P2i_init_sig05_mrq2", "POOL3:T_ndcg_2"}
    runs = sorted(p.name for p in (tmp_path / "work" / "tiny" / "runs").iterdir())
    assert runs == ["bm25.run", "bm25_stop_none.run", "like.run"]


@pytest.mark.slow
def test_the_judge_table_through_the_console_script(gp: ModuleType, tmp_path: Path) -> None:
    # Four queries: the judge's labels leave some query nothing relevant, which trec_eval
    # leaves out; the tier's values still line up with the human queries.
    beir = _tiny_collection(tmp_path)
    out = tmp_path / "judge.json"
    code = gp.main(
        [
            str(beir),
            "--work",
            str(tmp_path / "work"),
            "--variants",
            "bm25,like",
            "--judge-only",
            "--judge-rule",
            "P3e_mid2.5_ndcg",
            "--judge-draws",
            "20",
            "--resamples",
            "50",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    rows = json.loads(out.read_text())["judge"]["P3e_mid2.5_ndcg"]
    assert set(rows) == {"human"} | {f"{k}/{t}" for k in (0.4, 0.6, 0.8) for t in (100, 200, 400)}
    for kappa in (0.4, 0.6, 0.8):
        folder = tmp_path / "work" / "tiny"
        _, values, _ = gp.judged_values(
            beir, {"bm25": folder / "runs" / "bm25.run"}, folder, kappa, 0
        )
        assert values.shape == (1, 4, 4)


def test_a_judged_tier_adds_its_queries_to_the_human_set(gp: ModuleType) -> None:
    rng = np.random.default_rng(3)
    human = rng.uniform(0.2, 0.8, size=(4, 80))
    small = human * np.where(rng.random(80) < 0.5, 0.9, 1.0)  # about 5% worse, unevenly
    values = np.stack([human, small])
    rule = next(r for r in gp.rules() if r.name == "P3e_mid2.5_ndcg")
    # A judge that agrees with the people: the tier only adds queries, so the 5% drop is
    # caught more often with it than by 25 human queries alone.
    rates = gp.simulate_tier(
        values, values, rule, human_n=25, tiers=(0, 200), draws=200, resamples=100, seed=0
    )
    drop = gp.changes(2).index((0, 1))
    assert rates[200][drop] > rates[0][drop]
    assert rates[200][drop] > 0.9
    # A judge whose labels say nothing: its tier hides the drop.
    flat = np.stack([human, human])
    blind = gp.simulate_tier(
        values, flat, rule, human_n=25, tiers=(400,), draws=200, resamples=100, seed=0
    )
    assert blind[400][drop] < rates[0][drop]


def test_stored_rates_are_shown_again(gp: ModuleType, tmp_path: Path, capsys) -> None:
    row = {c: 1.0 for c in gp.COLUMNS}
    stored = {"rates": {"P3e_mid2.5_ndcg": {"25": row, "100": row}}}
    path = tmp_path / "rates.json"
    path.write_text(json.dumps(stored))
    assert gp.main(["--summary", str(path)]) == 0
    assert "| P3e_mid2.5_ndcg | 0.0 | 1 |" in capsys.readouterr().out
    assert gp.main(["--show", str(path)]) == 0
    assert "| P3e_mid2.5_ndcg | 100 | 1 |" in capsys.readouterr().out


def test_the_bench_rules_agree_with_the_products(gp: ModuleType) -> None:
    pytest.importorskip("retrieval_eval.compare.rules")
    rng = np.random.default_rng(4)
    good = rng.uniform(0.0, 1.0, size=(4, 50)).round(1)
    worse = np.where(rng.random((4, 50)) < 0.3, good * 0.8, good)
    better = np.where(rng.random((4, 50)) < 0.2, np.minimum(good * 1.1, 1.0), good)
    values = np.stack([good, worse, better])
    checked = gp.check_rules(values, sizes=[20, 25], samples=40, resamples=2000, seed=0)
    assert checked is not None
    assert set(checked) == set(gp.PRODUCT_RULES)
    for name, (agree, total) in checked.items():
        # The tests are random (the product's 10,000 sign patterns, the bench's 2,000): a
        # draw whose p sits at the level may go either way, nothing else may.
        assert agree >= total - 2, name
