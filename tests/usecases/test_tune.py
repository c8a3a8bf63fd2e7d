"""`retrieval-eval tune`, run as a user runs it, on a small hand-made BEIR folder."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from retrieval_eval.retrieval.config import Bm25Config, HybridConfig

CLI = Path(sys.executable).parent / "retrieval-eval"

CORPUS = [
    {"_id": "d1", "title": "Wing flutter", "text": "flutter of a swept wing at high speed"},
    {"_id": "d2", "title": "Flutter tests", "text": "wind tunnel flutter tests of a wing"},
    {"_id": "d3", "title": "Heat transfer", "text": "heat transfer in a hypersonic boundary layer"},
    {"_id": "d4", "title": "Buckling", "text": "buckling of thin cylindrical shells"},
    {"_id": "d5", "title": "Shock waves", "text": "oblique shock waves ahead of a blunt body"},
    {"_id": "d6", "title": "Jet noise", "text": "noise radiated by a supersonic jet exhaust"},
]
QUERIES = [
    {"_id": "q1", "text": "wing flutter"},
    {"_id": "q2", "text": "collapse of shells under load"},
    {"_id": "q3", "text": "heating at hypersonic speed"},
    {"_id": "q4", "text": "shock ahead of a body"},
    {"_id": "q5", "text": "loud engines"},
    {"_id": "q6", "text": "vibration tests in a tunnel"},
]
QRELS = "query-id\tcorpus-id\tscore\n" + "".join(
    f"{q}\t{d}\t1\n"
    for q, d in [
        ("q1", "d1"),
        ("q1", "d2"),
        ("q2", "d4"),
        ("q3", "d3"),
        ("q4", "d5"),
        ("q5", "d6"),
        ("q6", "d2"),
    ]
)


@pytest.fixture(autouse=True)
def _in_a_folder_of_its_own(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """beir and tune keep their cache in the folder they run in, as `run` does: one of
    its own, apart from the test's files (whose paths the messages show in full)."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture(scope="module")
def beir_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tune") / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    (folder / "qrels" / "test.tsv").write_text(QRELS)
    return folder


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, check=False)


def test_tune_cross_validates_the_grid_and_prints_a_settings_block(
    beir_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "tune.json"
    done = _run(
        "tune",
        str(beir_dir),
        "--retriever",
        "hybrid",
        "--param",
        "fusion=rrf,convex",
        "--param",
        "alpha=0:1:0.5",
        "--folds",
        "3",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert "6 judged queries, 4 grid points, ndcg@10, 3 folds (seed 0)" in done.stdout
    assert "cross-validated" in done.stdout and "95% CI" in done.stdout
    assert done.stdout.count("held out, picked fusion=") == 3
    block = done.stdout.split("Paste into retrieval-eval.toml:")[1]
    table = tomllib.loads(block)["retrievers"]["hybrid"]
    summary = json.loads(out.read_text())
    assert HybridConfig.model_validate(table).fusion_settings() == summary["in_sample"]["settings"]
    assert [p["settings"]["fusion"] for p in summary["points"]] == ["rrf", *["convex"] * 3]
    best = max(p["score"] for p in summary["points"])
    assert summary["in_sample"]["score"] == pytest.approx(best)
    assert 0.0 <= summary["cross_validated"]["mean"] <= best
    folds = summary["folds_held_out"]
    assert len(folds) == 3 and all(0.0 <= fold["score"] <= 1.0 for fold in folds)
    low, high = summary["cross_validated"]["ci95"]
    assert low <= summary["cross_validated"]["mean"] <= high
    # Dense returns every document of this corpus, so alpha = 1 is exactly dense's ranking.
    by_alpha = {p["settings"].get("alpha"): p["score"] for p in summary["points"]}
    assert by_alpha[1.0] == pytest.approx(summary["alone"]["dense"])
    # The built-in default (convex, alpha 0.7), scored per query beside every point, for
    # bench/cv_defaults.py's rule.
    assert summary["current"]["settings"] == HybridConfig().fusion_settings()
    per_query = summary["per_query"]
    assert len(per_query["points"]) == 4 and len(per_query["queries"]) == 6
    assert summary["current"]["score"] == pytest.approx(
        sum(per_query["current"]) / len(per_query["current"])
    )
    for point, scores in zip(summary["points"], per_query["points"], strict=True):
        assert point["score"] == pytest.approx(sum(scores) / len(scores))


def test_tune_agrees_with_beir_on_the_same_settings(beir_dir: Path, tmp_path: Path) -> None:
    config = tmp_path / "retrieval-eval.toml"
    config.write_text('[retrievers.hybrid]\nfusion = "dbsf"\nweights = { dense = 2.0 }\n')
    tuned = _run(
        "tune",
        str(beir_dir),
        "--param",
        "fusion=dbsf",
        "--folds",
        "2",
        "--config",
        str(config),
        "--json",
        str(tmp_path / "t.json"),
    )
    assert tuned.returncode == 0, tuned.stderr
    measured = _run(
        "beir",
        str(beir_dir),
        "--retriever",
        "hybrid",
        "--config",
        str(config),
        "--json",
        str(tmp_path / "b.json"),
    )
    assert measured.returncode == 0, measured.stderr
    tune_score = json.loads((tmp_path / "t.json").read_text())["points"][0]["score"]
    assert tune_score == pytest.approx(json.loads((tmp_path / "b.json").read_text())["ndcg@10"])


NOTES = {
    "aero/flutter": "# Wing flutter\n\nFlutter of a swept wing at high speed in a wind tunnel.",
    "aero/shells": "# Buckling\n\nBuckling of thin cylindrical shells under axial load.",
    "aero/heat": "# Heat transfer\n\nHeat transfer in a hypersonic boundary layer.",
    "aero/shock": "# Shock waves\n\nOblique shock waves ahead of a blunt body.",
    "aero/noise": "# Jet noise\n\nNoise radiated by a supersonic jet exhaust.",
    "cook/dal": "# Lentil dal\n\nA tadka of cumin and mustard seeds fried in ghee.",
}
FIXTURES = [
    ("h1", "wing flutter", "aero/flutter", []),
    ("h2", "collapse of shells under load", "aero/shells", []),
    ("h3", "heating at hypersonic speed", "aero/heat", []),
    ("h4", "shock ahead of a body", "aero/shock", []),
    ("h5", "loud engines", "aero/noise", []),
    ("h6", "cumin and mustard seeds", "cook/dal", ["cooking"]),
]


def _golden_project(root: Path, *, broken: bool = False) -> Path:
    """A project as `run` sees it: a config naming the corpus, and a dataset file."""
    for doc_id, text in NOTES.items():
        note = root / "notes" / f"{doc_id}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        tags = "cooking" if doc_id.startswith("cook/") else "aero"
        note.write_text(f"---\ntags: [{tags}]\n---\n{text}\n")
    lines = []
    for query_id, query, expected, tags in FIXTURES:
        fixture: dict[str, object] = {
            "query_id": query_id,
            "query": query,
            "retrieval_type": "hybrid",
            "expected_top_k_ids": [expected],
            "ground_truth_source": "human-annotated",
        }
        if tags:
            fixture["filters"] = {"tags": tags}
        lines.append(json.dumps(fixture))
    if broken:
        lines[2] = lines[2].replace('"aero/heat"', '"aero/missing"')
    (root / "golden").mkdir()
    (root / "golden" / "hybrid.jsonl").write_text("\n".join(lines) + "\n")
    (root / "retrieval-eval.toml").write_text(
        'datasets = "golden"\ncorpus = "notes"\nmin_fixtures = 1\nmin_human = 0\n'
    )
    return root / "golden" / "hybrid.jsonl"


def test_tune_searches_a_golden_dataset_over_the_configs_corpus(tmp_path: Path) -> None:
    dataset = _golden_project(tmp_path)
    out = tmp_path / "tune.json"
    done = subprocess.run(
        [
            str(CLI),
            "tune",
            "golden/hybrid.jsonl",
            "--param",
            "fusion=convex",
            "--param",
            "alpha=0,1",
            "--folds",
            "2",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "tune hybrid on golden/hybrid.jsonl: 6 judged queries, 2 grid points" in done.stdout
    assert "[retrievers.hybrid]" in done.stdout.split("Paste into retrieval-eval.toml:")[1]
    summary = json.loads(out.read_text())
    assert summary["dataset"] == "golden/hybrid.jsonl" and summary["split"] is None
    # alpha 1 ranks as dense alone, through the same queries (tag filter included) and
    # grades; alpha 0 ranks BM25's matches first, then dense's other documents.
    by_alpha = {p["settings"]["alpha"]: p["score"] for p in summary["points"]}
    assert by_alpha[1.0] == pytest.approx(summary["alone"]["dense"])
    assert 0.0 < summary["alone"]["bm25"] <= by_alpha[0.0]
    assert dataset.is_file()


def test_tune_refuses_an_invalid_golden_dataset_with_file_and_line(tmp_path: Path) -> None:
    _golden_project(tmp_path, broken=True)
    done = subprocess.run(
        [str(CLI), "tune", "golden/hybrid.jsonl", "--param", "alpha=0.5"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "golden/hybrid.jsonl:3:" in done.stderr and "aero/missing" in done.stderr


def test_tune_bm25_searches_indexing_settings_and_scores_as_beir_does(
    beir_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "bm25.json"
    done = _run(
        "tune",
        str(beir_dir),
        "--retriever",
        "bm25",
        "--param",
        "k1=0.9,1.5",
        "--param",
        "stopwords=lucene,none",
        "--param",
        "stemming=true,false",
        "--folds",
        "2",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert "tune bm25 on" in done.stdout and "8 grid points" in done.stdout
    assert "current settings" in done.stdout
    table = tomllib.loads(done.stdout.split("Paste into retrieval-eval.toml:")[1])
    summary = json.loads(out.read_text())
    assert (
        Bm25Config.model_validate(table["retrievers"]["bm25"]).k1
        == (summary["in_sample"]["settings"]["k1"])
    )
    assert len(summary["per_query"]["points"]) == 8
    assert len(summary["per_query"]["queries"]) == 6
    # The configuration's own table, scored by `beir` with the same settings.
    measured = _run(
        "beir", str(beir_dir), "--retriever", "bm25", "--json", str(tmp_path / "b.json")
    )
    assert measured.returncode == 0, measured.stderr
    beir_score = json.loads((tmp_path / "b.json").read_text())["ndcg@10"]
    assert summary["current"]["score"] == pytest.approx(beir_score)
    stemmed = [
        p["score"]
        for p in summary["points"]
        if p["settings"]["stemming"] and p["settings"]["k1"] == 0.9
    ]
    assert stemmed and all(0.0 <= score <= 1.0 for score in stemmed)


def test_tune_dense_searches_chunking(beir_dir: Path, tmp_path: Path) -> None:
    done = _run(
        "tune",
        str(beir_dir),
        "--retriever",
        "dense",
        "--param",
        "chunk_tokens=64,254",
        "--param",
        "chunk_overlap=0,16",
        "--folds",
        "2",
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert done.returncode == 0, done.stderr
    assert "tune dense on" in done.stdout and "4 grid points" in done.stdout
    assert "[retrievers.dense]\nchunk_tokens = " in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--param", "beta=0:1:0.1"], "expected NAME=VALUES"),
        (["--param", "alpha=2"], "grid point alpha=2.0"),
        (["--param", "alpha=0,1", "--folds", "7"], "6 judged queries cannot be split into 7"),
        (["--param", "alpha=0", "--metric", "ndcg@0"], "cut-offs start at 1"),
    ],
)
def test_bad_requests_exit_2_with_the_reason(beir_dir: Path, args: list[str], message: str) -> None:
    done = _run("tune", str(beir_dir), *args)
    assert done.returncode == 2
    assert message in done.stderr


def test_the_settings_flags_tune_shows_are_applied_over_the_file(
    beir_dir: Path, tmp_path: Path
) -> None:
    """As for `run`: the command's settings flags, all of them, over --config's values."""
    config = tmp_path / "retrieval-eval.toml"
    config.write_text('cache_dir = "kept"\n')
    tune = [str(CLI), "tune", str(beir_dir), "--retriever", "dense", "--param", "chunk_tokens=254"]
    done = subprocess.run(
        [*tune, "--folds", "2", "--config", str(config), "--cache-dir", "won"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "won" / "embeddings").is_dir()
    assert not (tmp_path / "kept").exists()

    missing = tmp_path / "no-model"
    refused = subprocess.run(
        [*tune, "--folds", "2", "--config", str(config), "--model-dir", str(missing)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith(
        "error: no-model: the embedding model is not installed here"
    ), refused.stderr
