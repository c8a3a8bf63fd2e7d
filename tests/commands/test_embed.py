"""`retrieval-eval embed` through the console script: --shard and --cache-dir reach the
embedding and the summary line says what was embedded where; a bad --shard or corpus is an
error naming it, before any model is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.index.embedding_cache import EMBEDDINGS_SUBDIR, EmbeddingCache
from retrieval_eval.index.model_catalog import DEFAULT_MODEL
from retrieval_eval.index.model_install import BUILT_SHA256
from tests.author.cli import retrieval_eval

NOTES = ("a", "b", "c", "d")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    corpus = tmp_path / "datasets" / "corpus"
    corpus.mkdir(parents=True)
    for name in NOTES:
        (corpus / f"{name}.md").write_text(f"# {name}\n\nnote {name} about things\n")
    return tmp_path


def _held(folder: Path) -> int:
    with EmbeddingCache(folder / EMBEDDINGS_SUBDIR) as cache:
        return len(cache)


def test_a_shard_then_the_rest_fill_the_cache_the_flag_names(
    project: Path, model_dir: Path
) -> None:
    sha = BUILT_SHA256[DEFAULT_MODEL][:12]

    shard = retrieval_eval("embed", "--shard", "1/2", "--cache-dir", "c", cwd=project)
    held = _held(project / "c")
    rest = retrieval_eval("embed", "--cache-dir", "c", cwd=project)

    assert shard.returncode == 0, shard.stderr
    assert 0 < held < len(NOTES)  # one chunk a note, shard 1 of 2 holds some of them
    assert shard.stderr.splitlines()[-1] == (
        f"shard 1/2: {held} of {len(NOTES)} chunks: {held} embedded, 0 already cached "
        f"(model sha256 {sha}) in {project / 'c'}"
    )
    assert rest.returncode == 0, rest.stderr
    assert rest.stderr.splitlines()[-1] == (
        f"{len(NOTES)} of {len(NOTES)} chunks: {len(NOTES) - held} embedded, {held} already "
        f"cached (model sha256 {sha}) in {project / 'c'}"
    )
    assert _held(project / "c") == len(NOTES)
    assert not (project / ".retrieval-eval-cache").exists()  # the default, not used
    assert shard.stdout == rest.stdout == ""


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--shard", "3/2"), "--shard '3/2': I must be between 1 and N (2)"),
        (("--shard", "x"), "--shard 'x': expected I/N"),
        (("--corpus", "nowhere"), "nowhere: corpus path does not exist"),
    ],
    ids=["shard-out-of-range", "shard-not-i-of-n", "no-corpus"],
)
def test_a_bad_flag_is_an_error_naming_it(
    project: Path, flags: tuple[str, ...], message: str
) -> None:
    done = retrieval_eval("embed", *flags, "--cache-dir", "c", cwd=project)

    assert done.returncode == 2
    assert message in done.stderr
    assert "embedding:" not in done.stderr  # nothing embedded
