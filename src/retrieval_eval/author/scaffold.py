"""The files `retrieval-eval init` writes, rendered from package templates.

Idempotent: a file that already holds exactly what would be written is left alone,
one that differs is kept unless the user passes ``--force``. Each written file is
checked before `init` reports success: the configuration is loaded as a run would
load it, and each workflow must parse as YAML with the job and steps we wrote.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from jinja2 import PackageLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from retrieval_eval.author.detect import AdapterHint, Detected
from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_bytes, atomic_write_text
from retrieval_eval.load.fixtures import RETRIEVAL_TYPES
from retrieval_eval.render.links import REPORT_ARTIFACT
from retrieval_eval.retrieval.config import CustomConfig
from retrieval_eval.settings import RunSettings

ACTION = "org/retrieval-eval@v1"
CONFIG = Path("retrieval-eval.toml")
WORKFLOW = Path(".github/workflows/retrieval-eval.yml")
PUBLISH_WORKFLOW = Path(".github/workflows/retrieval-eval-publish.yml")
# On a push to the default branch: evaluate, then commit baseline.json and the history,
# which draws the comment's sparklines.
BASELINE_WORKFLOW = Path(".github/workflows/retrieval-eval-baseline.yml")
WORKFLOWS = (WORKFLOW, BASELINE_WORKFLOW, PUBLISH_WORKFLOW)
DATASETS_README = "README.md"
# The module name of the adapter init suggests, beside the code it adapts.
ADAPTER_MODULE = "retrieval_eval_adapter"

Outcome = Literal["written", "unchanged", "kept", "overwritten", "appended"]


@dataclass(frozen=True)
class PlannedFile:
    path: Path  # relative to the repository
    text: str


@dataclass(frozen=True)
class WrittenFile:
    path: Path
    outcome: Outcome


def plan_files(
    detected: Detected,
    *,
    corpus: str,
    datasets: str,
    fork_safe: bool,
    action: str = ACTION,
    code_paths: Sequence[str] = (),
    custom: Mapping[str, object] | None = None,
    dataset_retrievers: Mapping[str, object] | None = None,
) -> list[PlannedFile]:
    """The files init writes. ``custom`` and ``dataset_retrievers`` are the tables the
    existing configuration holds (kept as they are); without them, what detection wired."""
    env = _environment()
    guess = detected.corpus
    reason = guess.reason if guess is not None and guess.path == corpus else ""
    wired_by = ""
    wired: Mapping[str, object] | None = None  # the table a wiring rule found
    wiring = detected.wiring
    if wiring is not None and wiring.retriever != "custom" and custom is None:
        wired, wired_by = wiring.table, wiring.reason  # `[retrievers.<its name>]`
    elif wiring is not None and (custom is None or dict(custom) == dict(wiring.table)):
        # Wired now, or kept as init wired it before: the same file either way.
        custom = dict(wiring.table)
        wired_by = wiring.reason
    serving = wiring.retriever if wired is not None and wiring is not None else "custom"
    if dataset_retrievers is None and (custom is not None or wired is not None):
        dataset_retrievers = {f"{kind}.jsonl": serving for kind in RETRIEVAL_TYPES}
    adapter = (
        adapter_plan(detected.adapter, env)
        if custom is None and wired is None and detected.adapter is not None
        else None
    )
    values = {
        "corpus": _toml_string(corpus),
        "corpus_reason": reason,
        "datasets": _toml_string(datasets),
        "action": action,
        "paths": workflow_paths(detected, corpus=corpus, datasets=datasets, code_paths=code_paths),
        "fork_safe": fork_safe,
        "artifact": REPORT_ARTIFACT,
        "report_dir": RunSettings().report_dir.as_posix(),
        # A configured [retrievers.custom] survives `init --force`.
        "custom_table": _custom_table(custom) if custom is not None else "",
        "wired_by": wired_by,
        # Another retriever's table a wiring rule found (a framework's store, say).
        "wired_name": wiring.retriever if wired is not None and wiring is not None else "",
        "wired_table": _custom_table(wired) if wired is not None else "",
        "dataset_retrievers": (
            _custom_table(dataset_retrievers) if dataset_retrievers is not None else ""
        ),
        "adapter": adapter,
        # The datasets start at the minimum size validation accepts: a tenth of it may lose
        # its answer before the gate fails on the count alone.
        "queries": RunSettings().min_fixtures,
        "max_regressed_queries": max(1, RunSettings().min_fixtures // 10),
    }
    files = [
        PlannedFile(CONFIG, env.get_template("retrieval-eval.toml.j2").render(values)),
        PlannedFile(WORKFLOW, env.get_template("retrieval-eval.yml.j2").render(values)),
        PlannedFile(
            BASELINE_WORKFLOW, env.get_template("retrieval-eval-baseline.yml.j2").render(values)
        ),
        PlannedFile(
            Path(datasets) / DATASETS_README,
            env.get_template("datasets-README.md.j2").render(values),
        ),
    ]
    if fork_safe:
        publish = env.get_template("retrieval-eval-publish.yml.j2").render(values)
        files.append(PlannedFile(PUBLISH_WORKFLOW, publish))
    return files


@dataclass(frozen=True)
class AdapterPlan:
    """The commented adapter of the configuration: where to save it and what it says."""

    path: str  # relative to the repository
    python: str  # the `[retrievers.custom] python` value naming its factory
    cwd: str | None
    lines: list[str]  # the module's source, one line each
    target: str  # what it adapts, for the comment


def _environment() -> SandboxedEnvironment:
    return SandboxedEnvironment(
        loader=PackageLoader("retrieval_eval.author", "templates"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # TOML, YAML and Markdown; every value is quoted by the templates
    )


def adapter_plan(hint: AdapterHint, env: SandboxedEnvironment | None = None) -> AdapterPlan:
    """The adapter from the contract (`retrieval_eval.api`) to the code init found."""
    env = env or _environment()
    if hint.module is None or hint.symbol is None or hint.file is None:
        values = {
            "target": "your search code",
            "import_line": "from my_search import MySearch  # EDIT: your code",
            "name": "custom",
            "build": "MySearch(...)",
            "call": "self.engine.search(query, depth)",
        }
        folder, target, module = "", "your search code", ADAPTER_MODULE
    else:
        package = hint.module.rpartition(".")[0]
        folder = Path(hint.file).parent.as_posix()
        target = f"{hint.symbol} ({hint.file})"
        values = {
            "target": f"{hint.module}.{hint.symbol}",
            "import_line": f"from {hint.module} import {hint.symbol}",
            "name": _kebab(hint.symbol),
            "build": f"{hint.symbol}(...)" if hint.method is not None else "corpus.documents",
            "call": (
                f"self.engine.{hint.method}(query, depth)"
                if hint.method is not None
                else f"{hint.symbol}(query, depth)"
            ),
        }
        module = f"{package}.{ADAPTER_MODULE}" if package else ADAPTER_MODULE
    source = env.get_template("custom-adapter.py.j2").render(values)
    path = f"{folder}/{ADAPTER_MODULE}.py" if folder and folder != "." else f"{ADAPTER_MODULE}.py"
    return AdapterPlan(
        path=path,
        python=f"{module}:make_retriever",
        cwd=hint.cwd,
        lines=source.rstrip("\n").split("\n"),
        target=target,
    )


def _kebab(name: str) -> str:
    words = [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", name)]
    return "-".join(words) or "custom"


def workflow_paths(
    detected: Detected, *, corpus: str, datasets: str, code_paths: Sequence[str] = ()
) -> list[str]:
    """The Action's `paths` input: what, when changed, can change the numbers."""
    paths = [f"{folder}/**" for folder in detected.code_dirs]
    corpus_glob = corpus if Path(corpus).suffix else f"{corpus.rstrip('/')}/**"
    for entry in (
        *code_paths,
        corpus_glob,
        f"{datasets.rstrip('/')}/**",
        str(CONFIG),
        "baseline.json",
    ):
        if entry not in paths and not any(_covered(entry, p) for p in paths):
            paths.append(entry)
    return paths


def existing_custom_table(root: Path) -> Mapping[str, object] | None:
    """The `[retrievers.custom]` table of the configuration file, as written there."""
    retrievers = _existing(root).get("retrievers")
    table = retrievers.get("custom") if isinstance(retrievers, dict) else None
    return table if isinstance(table, dict) else None


def existing_dataset_retrievers(root: Path) -> Mapping[str, object] | None:
    """The `[dataset_retrievers]` table of the configuration file, as written there."""
    table = _existing(root).get("dataset_retrievers")
    return table if isinstance(table, dict) else None


def _existing(root: Path) -> dict[str, object]:
    try:
        return tomllib.loads((root / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # reading the configuration itself reports what is wrong with it


def _custom_table(data: Mapping[str, object]) -> str:
    """The body of a `[retrievers.custom]` table holding what ``data`` sets."""
    return "\n".join(f"{_toml_key(key)} = {_toml_value(value)}" for key, value in data.items())


def _toml_key(key: str) -> str:
    return (
        key
        if key.replace("_", "").replace("-", "").isalnum() and key.isascii()
        else json.dumps(key)
    )


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    raise InputError(f"cannot write {value!r} back into [retrievers.custom]", file=CONFIG)


def custom_code_paths(custom: CustomConfig | None, root: Path) -> list[str]:
    """The `paths` entries for the code `[retrievers.custom]` runs: the folder of the
    factory's module, or of each file of the repository the command names (a file at
    the repository root is listed itself, not the whole repository)."""
    if custom is None:
        return []
    files: list[Path] = []
    if custom.python is not None:
        module = custom.python.partition(":")[0].split(".")
        base = Path()  # the module is imported from `cwd`, else the repository
        if custom.cwd is not None:
            cwd = (root / custom.cwd).resolve()
            base = cwd.relative_to(root.resolve()) if cwd.is_relative_to(root.resolve()) else base
        for candidate in (Path(*module).with_suffix(".py"), Path(*module) / "__init__.py"):
            if (root / base / candidate).is_file():
                files.append(base / candidate)
                break
        else:
            # Not found as a file: the top package's folder is still the best guess.
            files.append(base / module[0] / "__init__.py")
    for word in custom.command or []:
        base = root / (custom.cwd or Path("."))
        candidate = (base / word).resolve()
        if candidate.is_file() and candidate.is_relative_to(root.resolve()):
            files.append(candidate.relative_to(root.resolve()))
    entries: list[str] = []
    for file in files:
        entry = file.as_posix() if len(file.parts) == 1 else f"{file.parent.as_posix()}/**"
        if entry not in entries:
            entries.append(entry)
    return entries


# What init adds to .gitignore: the report folder and the embedding cache (a committed
# cache is never used, see index/tracked_files.py).
GITIGNORE = Path(".gitignore")


def gitignore_lines() -> tuple[str, ...]:
    defaults = RunSettings()
    return (f"{defaults.report_dir.as_posix()}/", f"{defaults.cache_dir.as_posix()}/")


def add_gitignore(root: Path) -> tuple[Outcome, list[str]]:
    """Append the entries .gitignore lacks; the user's lines are kept byte for byte."""
    target = root / GITIGNORE
    if target.exists() and not target.is_file():
        raise InputError("exists and is not a regular file; move it away", file=target)
    current = target.read_bytes() if target.is_file() else b""
    have = {line.strip().strip(b"/") for line in current.splitlines()}
    missing = [line for line in gitignore_lines() if line.strip("/").encode() not in have]
    if not missing:
        return "unchanged", []
    prefix = current if not current or current.endswith(b"\n") else current + b"\n"
    added = "# retrieval-eval: its report and embedding cache\n" + "".join(
        f"{line}\n" for line in missing
    )
    try:
        atomic_write_bytes(target, prefix + added.encode())
    except OSError as error:
        raise InputError(f"could not write: {error.strerror or error}", file=target) from None
    return ("written" if not current else "appended"), missing


def _covered(entry: str, pattern: str) -> bool:
    return pattern.endswith("/**") and entry.startswith(pattern[:-2])


def _toml_string(value: str) -> str:
    """The inside of a TOML basic string (the templates add the quotes)."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def write_files(root: Path, files: list[PlannedFile], *, force: bool) -> list[WrittenFile]:
    results = []
    for planned in files:
        target = root / planned.path
        if target.is_file():
            current = target.read_text(encoding="utf-8", errors="replace")
            if current == planned.text:
                results.append(WrittenFile(planned.path, "unchanged"))
                continue
            if not force:
                results.append(WrittenFile(planned.path, "kept"))
                continue
            atomic_write_text(target, planned.text)
            results.append(WrittenFile(planned.path, "overwritten"))
            continue
        if target.exists():
            raise InputError("exists and is not a regular file; move it away", file=target)
        atomic_write_text(target, planned.text)
        results.append(WrittenFile(planned.path, "written"))
    return results


def check_workflow(path: Path) -> None:
    """The workflow parses and has the job init wrote (actionlint runs in our own CI)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise InputError(f"not valid YAML: {error}", file=path) from None
    jobs = data.get("jobs") if isinstance(data, dict) else None
    if not isinstance(jobs, dict) or not jobs:
        raise InputError("the workflow has no jobs", file=path)
    for name, job in jobs.items():
        steps = job.get("steps") if isinstance(job, dict) else None
        if not isinstance(steps, list) or not steps:
            raise InputError(f"job {name!r} has no steps", file=path)
