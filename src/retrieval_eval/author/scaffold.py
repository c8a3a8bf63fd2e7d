"""The files `retrieval-eval init` writes, rendered from package templates.

Idempotent: a file that already holds exactly what would be written is left alone,
one that differs is kept unless the user passes ``--force``. Each written file is
checked before `init` reports success: the configuration is loaded as a run would
load it, and each workflow must parse as YAML with the job and steps we wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from jinja2 import PackageLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from retrieval_eval.author.detect import Detected
from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
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

Outcome = Literal["written", "unchanged", "kept", "overwritten"]


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
) -> list[PlannedFile]:
    env = SandboxedEnvironment(
        loader=PackageLoader("retrieval_eval.author", "templates"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # TOML, YAML and Markdown; every value is quoted by the templates
    )
    guess = detected.corpus
    reason = guess.reason if guess is not None and guess.path == corpus else ""
    values = {
        "corpus": _toml_string(corpus),
        "corpus_reason": reason,
        "datasets": _toml_string(datasets),
        "action": action,
        "paths": workflow_paths(detected, corpus=corpus, datasets=datasets),
        "fork_safe": fork_safe,
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


def workflow_paths(detected: Detected, *, corpus: str, datasets: str) -> list[str]:
    """The Action's `paths` input: what, when changed, can change the numbers."""
    paths = [f"{folder}/**" for folder in detected.code_dirs]
    corpus_glob = corpus if Path(corpus).suffix else f"{corpus.rstrip('/')}/**"
    for entry in (corpus_glob, f"{datasets.rstrip('/')}/**", str(CONFIG), "baseline.json"):
        if entry not in paths and not any(_covered(entry, p) for p in paths):
            paths.append(entry)
    return paths


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
