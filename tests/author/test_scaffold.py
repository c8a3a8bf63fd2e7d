"""`retrieval-eval init` in a repository: what it detects, writes, keeps and checks, and what
it adds to `.gitignore` (appended, never duplicated, the user's lines kept byte for byte)."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.author.detect import AdapterHint, Detected, Wiring
from retrieval_eval.author.scaffold import add_gitignore, gitignore_lines, plan_files
from retrieval_eval.load.corpus import _SQLITE_SUFFIXES
from retrieval_eval.settings import read_settings
from tests.author.cli import retrieval_eval
from tests.load.test_bear import make_bear_database


@pytest.fixture
def repo(tmp_path: Path, repo_root: Path) -> Path:
    """A project with notes in kb/ and search code in app/search/."""
    shutil.copytree(repo_root / "datasets" / "corpus", tmp_path / "kb")
    (tmp_path / "docs").mkdir()
    for name in ("a.md", "b.md", "c.md", "d.md"):  # documentation, not the corpus
        (tmp_path / "docs" / name).write_text("# Docs\n")
    code = tmp_path / "app" / "search"
    code.mkdir(parents=True)
    (code / "index.py").write_text("import chromadb\n\nclient = chromadb.Client()\n")
    (tmp_path / "app" / "web.py").write_text("print('hello')\n")
    (tmp_path / "README.md").write_text("# My project\n")
    return tmp_path


def _workflow(path: Path) -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(path.read_text())
    return loaded


def test_init_detects_the_corpus_and_code_and_writes_checked_files(repo: Path) -> None:
    result = retrieval_eval("init", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert "corpus: kb (61 Markdown notes)" in result.stdout
    assert "retrieval code: app/search" in result.stdout
    config = (repo / "retrieval-eval.toml").read_text()
    assert 'corpus = "kb"' in config and 'datasets = "datasets"' in config
    steps = _workflow(repo / ".github/workflows/retrieval-eval.yml")["jobs"]["evaluate"]["steps"]
    assert [step.get("uses") for step in steps] == [
        "actions/checkout@v4",
        "actions/cache@v4",
        "org/retrieval-eval@v1",
        "actions/upload-artifact@v4",  # report.html, which the comment links to
    ]
    _assert_restores_the_embedding_cache(steps[1])
    assert steps[2]["with"]["paths"].split() == [
        "app/search/**",
        "kb/**",
        "datasets/**",
        "retrieval-eval.toml",
        "baseline.json",
    ]
    assert "expected_top_k_ids" in (repo / "datasets" / "README.md").read_text()
    assert not (repo / ".github/workflows/retrieval-eval-publish.yml").exists()
    # The next three commands, with the detected paths filled in.
    assert "retrieval-eval generate " in result.stdout
    assert "retrieval-eval review datasets/semantic.jsonl" in result.stdout
    assert "retrieval-eval run" in result.stdout
    next_steps = result.stdout.split("Next:\n", 1)[1].splitlines()
    assert len({line.index("#") for line in next_steps}) == 1  # one column of comments
    # The config is one `run` accepts: validation is what fails next (no datasets yet).
    run = retrieval_eval("validate", "datasets", "--corpus", "kb", cwd=repo)
    assert "no dataset files in this folder" in run.stderr


def _assert_restores_the_embedding_cache(step: dict[Any, Any]) -> None:
    """The cache step: the run's embedding cache folder, keyed on the configuration and the
    commit, with restore keys that let a pull request start from its base branch's cache."""
    assert step["uses"] == "actions/cache@v4"
    assert step["with"]["path"] == ".retrieval-eval-cache/embeddings"
    prefix = "retrieval-eval-embeddings-${{ runner.os }}-"
    configured = prefix + "${{ hashFiles('retrieval-eval.toml') }}-"
    assert step["with"]["key"] == configured + "${{ github.sha }}"
    assert step["with"]["restore-keys"].splitlines() == [configured, prefix]


def _readme_workflow(readme: str, title: str) -> dict[Any, Any]:
    after = readme.split(title, 1)[1]
    block = re.search(r"```yaml\n(.*?)```", after, re.DOTALL)
    assert block is not None
    loaded: dict[Any, Any] = yaml.safe_load(block.group(1))
    return loaded


def test_fork_safe_writes_the_readme_pair_plus_paths(repo: Path, repo_root: Path) -> None:
    result = retrieval_eval("init", "--fork-safe", "--corpus", "kb", cwd=repo)
    assert result.returncode == 0, result.stderr

    readme = (repo_root / "README.md").read_text()
    evaluate = _workflow(repo / ".github/workflows/retrieval-eval.yml")
    paths = evaluate["jobs"]["evaluate"]["steps"][2].pop("with")["paths"]
    assert "kb/**" in paths.split()
    assert evaluate == _readme_workflow(readme, "`.github/workflows/retrieval-eval.yml` (every")
    publish = _workflow(repo / ".github/workflows/retrieval-eval-publish.yml")
    assert publish == _readme_workflow(readme, "`.github/workflows/retrieval-eval-publish.yml`")


def test_init_writes_the_push_workflow_that_commits_the_baseline_and_the_history(
    repo: Path, repo_root: Path
) -> None:
    """Without it the history never fills, and the sparklines the README shows never appear."""
    assert retrieval_eval("init", "--corpus", "kb", cwd=repo).returncode == 0
    workflow = _workflow(repo / ".github/workflows/retrieval-eval-baseline.yml")
    docs = (repo_root / "docs" / "action.md").read_text()
    assert workflow == _readme_workflow(docs, "`.github/workflows/retrieval-eval-baseline.yml`")
    assert workflow["permissions"] == {
        "contents": "write",
        "statuses": "write",
        "pull-requests": "read",  # which pull request a push merged, and whether it was accepted
    }
    job = workflow["jobs"]["baseline"]
    assert job["if"] == "github.ref_name == github.event.repository.default_branch"
    checkout, cache, evaluate, commit = job["steps"]
    # The retriever runs between checkout and push: it must not find a write token on disk.
    assert checkout["with"] == {"persist-credentials": False}
    # The default branch's runs fill the cache scope every pull request restores from.
    _assert_restores_the_embedding_cache(cache)
    assert evaluate["uses"] == "org/retrieval-eval@v1"
    assert commit["if"] == "always()"
    # The files to commit are the ones the run says it changed (their paths are settings).
    assert evaluate["id"] == "evaluate"
    assert commit["env"] == {
        "TOKEN": "${{ github.token }}",
        "FILES": "${{ steps.evaluate.outputs.commit-files }}",
    }
    script = commit["run"]
    assert 'git config user.name "github-actions[bot]"' in script
    assert "41898282+github-actions[bot]@users.noreply.github.com" in script
    assert 'git add -A -- "$file"' in script
    assert 'push origin "HEAD:$GITHUB_REF_NAME"' in script


def test_the_push_step_keeps_its_history_line_when_the_branch_moves_on(
    repo: Path, tmp_path: Path
) -> None:
    """The step's own script, run against a remote whose branch gained a commit after the
    job's checkout: the push is refused once, then lands on the new tip."""
    assert retrieval_eval("init", "--corpus", "kb", cwd=repo).returncode == 0
    script = _workflow(repo / ".github/workflows/retrieval-eval-baseline.yml")["jobs"]["baseline"][
        "steps"
    ][3]["run"]
    origin = tmp_path / "origin.git"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "adopt"], check=True)
    subprocess.run(["git", "-C", str(repo), "push", "-q", str(origin), "HEAD:main"], check=True)
    job = tmp_path / "job"  # the job's shallow checkout
    subprocess.run(["git", "clone", "-q", "--depth=1", f"file://{origin}", str(job)], check=True)
    other = tmp_path / "other"  # someone merges while the job runs
    subprocess.run(["git", "clone", "-q", str(origin), str(other)], check=True)
    (other / "README.md").write_text("merged meanwhile\n")
    subprocess.run([*git, "-C", str(other), "add", "README.md"], check=True)
    subprocess.run([*git, "-C", str(other), "commit", "-qm", "meanwhile"], check=True)
    subprocess.run(["git", "-C", str(other), "push", "-q", "origin", "HEAD:main"], check=True)
    (job / "retrieval-eval-history.jsonl").write_text('{"run": 1}\n')

    done = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=job,
        env={
            **os.environ,
            "TOKEN": "t0ken",
            "GITHUB_REF_NAME": "main",
            "FILES": "retrieval-eval-history.jsonl",
        },
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    log = subprocess.run(
        ["git", "-C", str(origin), "log", "--format=%s", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert log == ["retrieval-eval: baseline and history", "meanwhile", "adopt"]
    shown = subprocess.run(
        ["git", "-C", str(origin), "show", "main:retrieval-eval-history.jsonl"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert shown == '{"run": 1}\n'
    readme = subprocess.run(
        ["git", "-C", str(origin), "show", "main:README.md"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert readme == "merged meanwhile\n"


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ({"data/beir/corpus.jsonl": '{"_id": "1", "text": "x"}\n'}, "data/beir"),
        ({"docs.jsonl": '{"id": "a", "title": "", "text": "hello"}\n'}, "docs.jsonl"),
        ({"notes/a.md": "# A\n", "notes/b.md": "# B\n", "notes/x/c.md": "# C\n"}, "notes"),
        ({"kb/a.markdown": "# A\n", "kb/b.MD": "# B\n", "kb/x/c.Markdown": "# C\n"}, "kb"),
    ],
)
def test_corpus_formats_are_detected(tmp_path: Path, layout: dict[str, str], expected: str) -> None:
    for name, text in layout.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = retrieval_eval("init", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f'corpus = "{expected}"' in (tmp_path / "retrieval-eval.toml").read_text()


@pytest.mark.parametrize("suffix", sorted(_SQLITE_SUFFIXES))
def test_a_bear_database_is_detected_under_every_name_the_loader_reads(
    tmp_path: Path, suffix: str
) -> None:
    (tmp_path / "bear").mkdir()
    make_bear_database(tmp_path / "bear" / f"database{suffix}")
    (tmp_path / "notes").mkdir()
    for name in ("a.md", "b.md", "c.md"):  # a Bear database outranks a folder of notes
        (tmp_path / "notes" / name).write_text("# Note\n")
    result = retrieval_eval("init", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f'corpus = "bear/database{suffix}"' in (tmp_path / "retrieval-eval.toml").read_text()


def test_no_corpus_found_says_so(tmp_path: Path) -> None:
    result = retrieval_eval("init", cwd=tmp_path)
    assert result.returncode == 0
    assert "warning: no corpus found" in result.stderr
    assert 'corpus = "corpus"' in (tmp_path / "retrieval-eval.toml").read_text()


def test_a_beir_folder_shipped_gzipped_is_detected(tmp_path: Path) -> None:
    """BEIR's downloads hold corpus.jsonl.gz, which the loader reads; init once missed it."""
    folder = tmp_path / "data" / "scifact"
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(b'{"_id": "1", "text": "x"}\n'))
    result = retrieval_eval("init", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert 'corpus = "data/scifact"' in (tmp_path / "retrieval-eval.toml").read_text()


ENTRIES = ("retrieval-eval-report/", ".retrieval-eval-cache/")


def test_init_appends_the_report_and_cache_folders_to_gitignore(tmp_path: Path) -> None:
    users = b"node_modules\r\n# mine\n*.log"  # CRLF, a comment, no final newline
    (tmp_path / ".gitignore").write_bytes(users)

    first = retrieval_eval("init", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert ".gitignore: appended retrieval-eval-report/, .retrieval-eval-cache/" in first.stdout
    text = (tmp_path / ".gitignore").read_bytes()
    assert text.startswith(users + b"\n")
    assert [line for line in text.decode().splitlines() if line in ENTRIES] == list(ENTRIES)

    again = retrieval_eval("init", cwd=tmp_path)
    assert ".gitignore: unchanged" in again.stdout
    assert (tmp_path / ".gitignore").read_bytes() == text


def test_init_writes_gitignore_when_there_is_none_and_respects_existing_entries(
    tmp_path: Path,
) -> None:
    assert retrieval_eval("init", cwd=tmp_path).returncode == 0
    assert set(ENTRIES) <= set((tmp_path / ".gitignore").read_text().splitlines())

    other = tmp_path / "other"
    other.mkdir()
    (other / ".gitignore").write_text("/retrieval-eval-report\n")
    assert retrieval_eval("init", cwd=other).returncode == 0
    lines = (other / ".gitignore").read_text().splitlines()
    assert lines.count("/retrieval-eval-report") == 1
    assert "retrieval-eval-report/" not in lines  # already ignored, in the user's spelling
    assert ".retrieval-eval-cache/" in lines


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_appending_keeps_every_byte_and_never_duplicates(existing: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / ".gitignore").write_bytes(existing)
        add_gitignore(root)
        once = (root / ".gitignore").read_bytes()
        add_gitignore(root)
        assert (root / ".gitignore").read_bytes() == once
        assert once.startswith(existing)
        have = {line.strip().strip(b"/") for line in once.splitlines()}
        assert {entry.strip("/").encode() for entry in gitignore_lines()} <= have


def test_a_wiring_rule_for_another_retriever_writes_its_table_and_serves_every_dataset(
    tmp_path: Path,
) -> None:
    """A rule of `WIRING_RULES` may find a retriever other than `custom` (a search service,
    a framework's store): its table is written under its own name, and what init writes is
    a configuration `run` reads."""
    wiring = Wiring(
        "http", {"url": "http://127.0.0.1:9/search"}, "svc/app.py", "svc/app.py: a service"
    )
    detected = Detected(corpus=None, code_dirs=("svc",), wiring=wiring, adapter=AdapterHint())
    files = plan_files(detected, corpus="kb", datasets="datasets", fork_safe=False)
    config = next(f.text for f in files if f.path == Path("retrieval-eval.toml"))
    (tmp_path / "retrieval-eval.toml").write_text(config)

    configured = read_settings(workdir=tmp_path, config_file=None, overrides={})

    assert "# Found by `retrieval-eval init`: svc/app.py: a service." in config
    assert "[retrievers.custom]\n" not in config and "adapter" not in config
    assert configured.retrievers.http is not None
    assert configured.dataset_retrievers == dict.fromkeys(
        ("semantic.jsonl", "keyword.jsonl", "hybrid.jsonl"), "http"
    )
