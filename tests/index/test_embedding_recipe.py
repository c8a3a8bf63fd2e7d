"""The embedding recipe: one per model and role, and the default's as every release wrote it."""

from __future__ import annotations

import json

import pytest

from retrieval_eval.index.embedding_recipe import embedding_recipe
from retrieval_eval.index.model_catalog import MODELS
from retrieval_eval.index.model_install import BUILT_SHA256, MODEL_SHA256

# What releases before the model catalogue wrote into every cache row: a cache made by
# them keeps serving its vectors.
EARLIER_RELEASES = (
    '{"dimensions":384,"max_tokens":256,"model_sha256":"'
    + MODEL_SHA256
    + '","normalisation":"l2","pooling":"mean","prefix":"","tokenizer_sha256":'
    '"8c7804a79ca2739c7e5ee74109fb13894f7d3cf3af6540837f27e49143313e82"}'
)


def _sha(name: str) -> str:
    spec = MODELS[name]
    return BUILT_SHA256[name] if spec.built else spec.files[spec.model_file].sha256


def test_the_default_models_recipe_is_the_one_earlier_releases_wrote() -> None:
    assert embedding_recipe(MODEL_SHA256) == EARLIER_RELEASES
    for role in ("query", "passage"):
        assert embedding_recipe(MODEL_SHA256, MODELS["all-MiniLM-L6-v2"], role) == (
            EARLIER_RELEASES
        )


def test_no_two_models_or_roles_share_a_recipe() -> None:
    recipes = {
        (name, role): embedding_recipe(_sha(name), spec, role)
        for name, spec in MODELS.items()
        for role in ("query", "passage")
    }
    by_model = {(name, recipes[(name, "passage")]) for name in MODELS}
    assert len({recipe for _, recipe in by_model}) == len(MODELS)
    e5 = "multilingual-e5-small-q4"
    assert recipes[(e5, "query")] != recipes[(e5, "passage")]


def test_the_int8_copys_recipe_is_the_defaults_with_its_own_model_file() -> None:
    # As `model_dir = ".../onnx-int8"` wrote it before the copy had a name: its caches stay.
    int8 = "all-MiniLM-L6-v2-int8"
    assert embedding_recipe(_sha(int8), MODELS[int8]) == EARLIER_RELEASES.replace(
        MODEL_SHA256, _sha(int8)
    )


@pytest.mark.parametrize("name", [name for name in MODELS if not MODELS[name].built])
def test_a_models_recipe_names_what_decides_its_vectors(name: str) -> None:
    spec = MODELS[name]
    for role in ("query", "passage"):
        recipe = json.loads(embedding_recipe(_sha(name), spec, role))
        assert recipe["model"] == name
        assert recipe["model_sha256"] == _sha(name)
        assert recipe["prefix"] == spec.prefix(role)
        assert (recipe["pooling"], recipe["normalisation"]) == (spec.pooling, spec.normalisation)
        assert recipe["max_tokens"] == spec.max_tokens
        assert recipe["engine"] == spec.engine
