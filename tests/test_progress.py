"""Progress as a user sees it: `retrieval-eval run` on a terminal draws a bar that moves
while the corpus is embedded; in a CI log it writes plain lines as it goes.

No test waits or times anything: ``[progress]`` sets the thresholds to zero, so every
step shows its progress however fast this machine is, and a small ``batch_size`` makes
the embedding take many batches.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from retrieval_eval.progress import estimate_line
from tests.author.cli import retrieval_eval
from tests.support.terminal import on_terminal

CONFIG = """\
[dataset_retrievers]
"semantic.jsonl" = "dense"
"keyword.jsonl" = "bm25"
"hybrid.jsonl" = "bm25"

[retrievers.dense]
batch_size = 4

[progress]
after_s = 0
every_s = 0
redraw_s = 0
"""


@pytest.fixture
def project(tmp_path: Path, repo_root: Path, model_dir: Path) -> Path:
    shutil.copytree(repo_root / "datasets", tmp_path / "datasets")
    (tmp_path / "retrieval-eval.toml").write_text(CONFIG)
    return tmp_path


@pytest.mark.slow
def test_the_bar_counts_texts_embedded_with_a_rate_and_time_left(project: Path) -> None:
    shown = on_terminal("run", cwd=project, env={"NO_COLOR": "1"}, stderr_too=True)

    assert shown.returncode in (0, 1), shown.stdout
    redraws = [part for part in shown.stdout.split("\r") if part.startswith("indexing for dense")]
    counts = [
        (int(m.group(1)), int(m.group(2)))
        for m in (re.search(r"\| *(\d+)/(\d+) \[", part) for part in redraws)
        if m is not None
    ]
    texts = [done for done, total in counts if total == counts[-1][1]]
    # The count moves batch by batch (4 texts a batch), up to every chunk of the corpus.
    assert len(set(texts)) >= 5, redraws
    assert texts == sorted(texts)
    assert texts[-1] == counts[-1][1]
    assert any(re.search(r"<\d\d:\d\d, +[\d.]+text/s\]", part) for part in redraws), redraws
    # Searching has its own bar, by query.
    assert any(
        re.search(r"semantic\.jsonl: searching with dense: .*\d+/\d+ \[.*query/s\]", part)
        for part in shown.stdout.split("\r")
    )


@pytest.mark.slow
def test_a_ci_log_gets_lines_as_it_goes_and_no_carriage_return(project: Path) -> None:
    done = retrieval_eval("run", "--no-progress", cwd=project, env={"CI": "true"})

    assert done.returncode in (0, 1), done.stderr
    assert "\r" not in done.stderr
    lines = [
        re.fullmatch(
            r"indexing for dense: (\d+)/(\d+) texts \((\d+)%\), [\d.]+ texts/s(, about .+ left)?",
            line,
        )
        for line in done.stderr.splitlines()
    ]
    progress = [(int(m.group(1)), int(m.group(2))) for m in lines if m is not None]
    assert len(progress) >= 5, done.stderr
    assert [n for n, _ in progress] == sorted(n for n, _ in progress)
    assert progress[-1][0] == progress[-1][1]
    # The step still ends with its one summary line, in documents.
    assert re.search(r"^indexing for dense: 61 documents in [\d.]+ s$", done.stderr, re.M)
    assert re.search(r"^semantic\.jsonl: searching with dense: \d+/\d+ queries", done.stderr, re.M)


@pytest.mark.slow
def test_a_step_shorter_than_after_s_prints_only_its_summary(project: Path) -> None:
    config = project / "retrieval-eval.toml"
    config.write_text(config.read_text().replace("after_s = 0", "after_s = 3600"))

    done = retrieval_eval("run", "--no-progress", cwd=project, env={"CI": "true"})

    assert done.returncode in (0, 1), done.stderr
    assert "texts/s" not in done.stderr and "queries/s" not in done.stderr
    assert re.search(r"^indexing for dense: 61 documents in [\d.]+ s$", done.stderr, re.M)


def test_embed_into_the_cache_shows_its_texts_as_it_goes(project: Path) -> None:
    done = retrieval_eval("embed", "--no-progress", cwd=project, env={"CI": "true"})

    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr
    counts = [
        int(n) for n in re.findall(r"^embedding: (\d+)/\d+ texts \(\d+%\), ", done.stderr, re.M)
    ]
    assert len(counts) >= 5 and counts == sorted(counts), done.stderr
    assert re.search(
        rf"^{counts[-1]} of {counts[-1]} chunks: {counts[-1]} embedded", done.stderr, re.M
    )


def test_the_estimate_line_names_the_work_and_its_time() -> None:
    assert estimate_line(11_429, 11_433, 11_433, 370.0) == (
        "embedding 11,429 documents (11,433 texts), about 6 min 10 s"
    )
    assert estimate_line(1, 1, 1, 0.2) == "embedding 1 document (1 text), about 1 s"
    assert estimate_line(1_398, 1, 1_782, 0.4) == (
        "embedding 1 of 1,782 texts (the rest are in the cache), about 1 s"
    )
