"""A small notes corpus of personal Markdown notes, and the installed embedding model."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.index.model_install import default_model_dir
from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.retrieval.config import DenseConfig, RetrieversConfig

NOTES = (
    Document(
        id="recipes/shakshuka",
        title="Shakshuka",
        text="# Shakshuka\nEggs poached in a spicy tomato and pepper sauce.\n"
        "## Flavor\nCumin and paprika give it a smoky taste.",
        tags=("recipes", "breakfast"),
    ),
    Document(
        id="recipes/pesto",
        title="Basil pesto",
        text="# Basil pesto\nBlend basil, pine nuts, garlic, parmesan and olive oil.",
        tags=("recipes",),
    ),
    Document(
        id="travel/lisbon",
        title="Trip to Lisbon",
        text="# Trip to Lisbon\nFive days in Portugal in May.\n"
        "## Budget\nThe flights cost 300 euros and the hotel 90 euros a night.\n"
        "## Food\nPastel de nata every morning.",
        tags=("travel",),
    ),
    Document(
        id="travel/kyoto",
        title="Kyoto journey",
        text="# Kyoto journey\nTemples, gardens and a ryokan stay. The train pass was expensive.",
        tags=("travel", "japan"),
    ),
    Document(
        id="software/release",
        title="Release checklist",
        text="# Release checklist\nTag the commit, build the wheel, deploy to production, "
        "then announce the release.",
        tags=("software",),
    ),
    Document(
        id="journal/2024-05-02",
        title="Journal",
        text="Tired after the deploy, cooked pesto pasta and planned the Lisbon trip.",
        tags=(),
    ),
)


@pytest.fixture(scope="session")
def notes() -> Corpus:
    return Corpus(documents=NOTES, location="notes")


@pytest.fixture(scope="session")
def model_dir() -> Path:
    path = default_model_dir(Path.home())
    assert (path / "model.onnx").is_file(), (
        f"no model in {path}: run `retrieval-eval model install` (make test does)"
    )
    return path


@pytest.fixture(scope="session")
def retrievers_config(model_dir: Path) -> RetrieversConfig:
    return RetrieversConfig(dense=DenseConfig(model_dir=model_dir, threads=2))
