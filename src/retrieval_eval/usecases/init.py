"""Scaffolding a repository for a gated pull request (`retrieval-eval init`).

The corpus is the configured one, else the one given, else the one detected; the retrieval
code found becomes the workflow's `paths` (and, when init can tell how, the retriever it
evaluates). Files that exist are kept unless ``force``; everything written is read back as
a run will read it. What it found and did is said line by line as it goes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from retrieval_eval.author.detect import RETRIEVAL_NAMES, Detected, detect
from retrieval_eval.author.scaffold import (
    CONFIG,
    GITIGNORE,
    WORKFLOW,
    WORKFLOWS,
    WrittenFile,
    add_gitignore,
    check_workflow,
    custom_code_paths,
    existing_custom_table,
    existing_dataset_retrievers,
    gitignore_lines,
    plan_files,
    write_files,
)
from retrieval_eval.settings import read_settings


class Say(Protocol):
    """A line for the user: on stdout, or (``err``) on stderr."""

    def __call__(self, message: str, *, err: bool = False) -> None: ...


def scaffold(
    root: Path,
    *,
    corpus: str | None,
    datasets: str,
    fork_safe: bool,
    force: bool,
    say: Say,
) -> None:
    """Write retrieval-eval.toml, the workflows and the datasets folder into ``root`` (an
    absolute path), then say what to do next."""
    detected = detect(root)
    existing = (
        read_settings(workdir=root, config_file=CONFIG, overrides={})
        if (root / CONFIG).is_file()
        else None
    )
    corpus_found = True
    if corpus is None and existing is not None:
        # A configured repository: its corpus, not a new guess the kept file would not hold.
        corpus = _relative(existing.corpus, root)
        say(f"corpus: {corpus} (from {CONFIG})")
    elif corpus is None:
        if detected.corpus is None:
            corpus = "corpus"
            corpus_found = False
        else:
            corpus = detected.corpus.path
            say(f"corpus: {corpus} ({detected.corpus.reason})")
    skipped = detected.skipped_docs
    if skipped is not None and skipped.path != corpus:
        say(
            f"note: {skipped.documents} Markdown files in {skipped.path}/ were skipped because "
            f"a documentation folder usually documents the project; if they are your corpus, "
            f"run: retrieval-eval init --corpus {skipped.path} --force",
            err=True,
        )
    custom = existing.retrievers.custom if existing is not None else None
    code_paths = custom_code_paths(custom, root)
    found_code = list(dict.fromkeys([f"{folder}/**" for folder in detected.code_dirs] + code_paths))
    if found_code:
        say("retrieval code: " + ", ".join(p.removesuffix("/**") for p in found_code))
    else:
        say(_NO_RETRIEVER_WARNING, err=True)
    kept_custom = existing_custom_table(root) if custom is not None else None
    planned = plan_files(
        detected,
        corpus=corpus,
        datasets=datasets,
        fork_safe=fork_safe,
        code_paths=code_paths,
        custom=kept_custom,
        dataset_retrievers=existing_dataset_retrievers(root) if existing is not None else None,
    )
    results = write_files(root, planned, force=force)
    config_kept = any(r.path == CONFIG and r.outcome == "kept" for r in results)
    _say_retriever(
        say, detected, wired=kept_custom is None and not config_kept, found_code=found_code
    )
    if kept_custom is None and config_kept and detected.wiring is not None:
        say(
            f"note: found {detected.wiring.reason}, but {CONFIG} exists and was kept; "
            "run `retrieval-eval init --force` to configure it (your [retrievers.custom] "
            "and [dataset_retrievers] tables, if any, are kept)",
            err=True,
        )
    gitignore, _ = add_gitignore(root)
    results.append(WrittenFile(GITIGNORE, gitignore))
    (root / datasets).mkdir(parents=True, exist_ok=True)

    # Check what is on disk now, whether written or kept, the way a run will read it.
    read_settings(workdir=root, config_file=CONFIG, overrides={})
    for workflow in WORKFLOWS:
        if (root / workflow).is_file():
            check_workflow(root / workflow)

    for result in results:
        note = {
            "written": "written",
            "overwritten": "overwritten (--force)",
            "appended": "appended " + ", ".join(gitignore_lines()),
            "unchanged": "unchanged",
            "kept": "exists and differs; kept (use --force to overwrite)",
        }[result.outcome]
        say(f"{result.path}: {note}")
    config_written = any(
        r.path == CONFIG and r.outcome in ("written", "overwritten") for r in results
    )
    if not corpus_found and config_written:
        say(
            "warning: no corpus found (a folder of Markdown notes, a JSONL file, a BEIR "
            f'folder or a Bear database); wrote corpus = "corpus" in {CONFIG}: set it to '
            "yours, or run: retrieval-eval init --corpus PATH --force",
            err=True,
        )
    steps: list[tuple[str, str]] = []
    if not (root / corpus).exists():
        steps.append((f"edit {CONFIG}", f'set corpus = "PATH": {corpus} does not exist'))
    steps += [
        (
            "retrieval-eval generate",
            "synthetic fixtures (needs ANTHROPIC_API_KEY)",
        ),
        (
            f"retrieval-eval review {datasets}/semantic.jsonl",
            "accept or fix them (also keyword.jsonl, hybrid.jsonl)",
        ),
        (
            "retrieval-eval run",
            "evaluate and write baseline.json; then commit and open a pull request",
        ),
    ]
    width = max(len(command) for command, _ in steps)
    say("\nNext:")
    for command, why in steps:
        say(f"  {command.ljust(width)}   # {why}")


_NO_RETRIEVER_WARNING = f"""\
warning: no retrieval code found (looked for files and folders named
  {", ".join(RETRIEVAL_NAMES)}; classes named *Search* or *Retriever*; functions
  search or retrieve; search-engine imports). The workflow's `paths` leaves your retriever
  out, so a pull request that changes only it is skipped with a green status.
  Name your retriever in {CONFIG}:
    [retrievers.custom]
    python = "module:factory"
  then run `retrieval-eval init --force` (it keeps that table and adds its folder to
  `paths`), or add its folder to `paths` in {WORKFLOW}, e.g. `src/my_search/**`."""


def _say_retriever(say: Say, detected: Detected, *, wired: bool, found_code: list[str]) -> None:
    """What init configured to be evaluated: the retriever it wired, or why not."""
    if not wired:
        return
    if detected.wiring is not None:
        wiring = detected.wiring
        table = ", ".join(f"{key} = {value!r}" for key, value in wiring.table.items())
        say(
            f"retriever: {wiring.retriever}, {table} ({wiring.reason}); "
            "every dataset file is evaluated with it"
        )
    elif found_code and detected.adapter is not None:
        say(
            f"retriever: not wired; {CONFIG} holds a commented adapter to your code "
            "(save it, edit its two EDIT lines, uncomment [retrievers.custom]); "
            "until then the built-in retrievers are evaluated",
            err=True,
        )


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
