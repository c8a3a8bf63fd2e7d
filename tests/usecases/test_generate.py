"""`retrieval-eval generate` for a new user: the key is checked before indexing, the
default leaves room to reject in review, and `--append` keeps what was reviewed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.author.cli import retrieval_eval
from tests.author.fake_writer import writer
from tests.support.fake_anthropic import FakeAnthropic


@pytest.fixture
def project(tmp_path: Path, repo_root: Path) -> Path:
    shutil.copytree(repo_root / "datasets" / "corpus", tmp_path / "notes")
    (tmp_path / "retrieval-eval.toml").write_text('corpus = "notes"\n')
    return tmp_path


def _env(fake: FakeAnthropic) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": fake.api_key, "ANTHROPIC_BASE_URL": fake.base_url}


def test_a_missing_key_is_reported_before_any_indexing(project: Path) -> None:
    result = retrieval_eval("generate", "--types", "keyword", cwd=project)

    assert result.returncode == 2
    assert "ANTHROPIC_API_KEY is not set" in result.stderr
    assert "export ANTHROPIC_API_KEY=" in result.stderr
    assert "indexing" not in result.stderr  # the slow part never started
    assert not (project / "datasets" / "keyword.jsonl").exists()


@pytest.mark.slow
def test_a_fully_cached_generation_needs_no_key(project: Path) -> None:
    args = ("generate", "--types", "keyword", "--per-file", "3", "--check-with", "bm25")
    with FakeAnthropic(responder=writer()) as fake:
        first = retrieval_eval(*args, cwd=project, env=_env(fake))
    assert first.returncode == 0, first.stderr
    written = (project / "datasets" / "keyword.jsonl").read_bytes()

    again = retrieval_eval(*args, "--force", cwd=project)

    assert again.returncode == 0, again.stderr
    assert (project / "datasets" / "keyword.jsonl").read_bytes() == written
    assert "0 API calls, 3 cached" in again.stdout


@pytest.mark.slow
def test_the_default_leaves_room_to_reject_and_no_room_is_warned(project: Path) -> None:
    with FakeAnthropic(responder=writer()) as fake:
        default = retrieval_eval(
            "generate", "--types", "keyword", "--check-with", "bm25", cwd=project, env=_env(fake)
        )
        assert default.returncode == 0, default.stderr
        lines = (project / "datasets" / "keyword.jsonl").read_text().splitlines()
        assert len(lines) == 25  # min_fixtures (20) plus 5 to reject
        assert "leaves no room to reject" not in default.stderr

        tight = retrieval_eval(
            "generate", "--types", "semantic", "--per-file", "20", "--check-with", "bm25",
            cwd=project, env=_env(fake),
        )  # fmt: skip
    assert tight.returncode == 0, tight.stderr
    assert "warning: --per-file 20 leaves no room to reject" in tight.stderr
    assert "use --per-file 25" in tight.stderr


@pytest.mark.slow
def test_append_adds_fixtures_and_keeps_every_reviewed_line(project: Path) -> None:
    args = ("generate", "--types", "keyword", "--per-file", "3", "--check-with", "bm25")
    with FakeAnthropic(responder=writer()) as fake:
        assert retrieval_eval(*args, cwd=project, env=_env(fake)).returncode == 0
        target = project / "datasets" / "keyword.jsonl"
        reviewed = [json.loads(line) for line in target.read_text().splitlines()]
        reviewed[0]["ground_truth_source"] = "human-annotated"  # what review does
        reviewed[0]["query"] = "a query a person rewrote"
        before = "".join(json.dumps(f) + "\n" for f in reviewed)
        target.write_text(before)

        refused = retrieval_eval(*args, cwd=project, env=_env(fake))
        assert refused.returncode == 2
        assert "pass --append to add fixtures to it" in refused.stderr

        appended = retrieval_eval(*args, "--append", cwd=project, env=_env(fake))

    assert appended.returncode == 0, appended.stderr
    text = target.read_text()
    assert text.startswith(before)  # the reviewed lines, byte for byte
    added = [json.loads(line) for line in text[len(before) :].splitlines()]
    assert len(added) == 3
    ids = [f["query_id"] for f in reviewed + added]
    assert len(set(ids)) == len(ids)
    old_docs = {d for f in reviewed for d in f["expected_top_k_ids"]}
    assert not old_docs & {d for f in added for d in f["expected_top_k_ids"]}
    assert "keyword.jsonl: 6 fixtures (3 kept, 3 added)" in appended.stdout
    validate = retrieval_eval("validate", "datasets", "--corpus", "notes", cwd=project)
    assert "duplicate" not in validate.stdout + validate.stderr
