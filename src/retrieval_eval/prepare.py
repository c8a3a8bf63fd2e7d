"""One way in: how every edge (each command, each mode of the Action) prepares a run.

The order is the same everywhere, and it is the point of this module:

1. read the configuration without resolving any environment variable it names (on a
   pull request, the base commit's too);
2. withhold ``secret_env`` (on a pull request, the union of both commits' names) and the
   runner's credentials from the environment every child process inherits;
3. only then resolve what the settings name in the environment (``headers_env``,
   ``dsn_env``), so a withheld name reads as "not set";
4. check that every path the run writes stays inside the repository;
5. while the run lasts, read corpus and dataset files only within the input roots.

On a pull request each setting is read from the commit the option table
(``retrieval_eval.config``) names. Only what is under test is the pull request's: the
retrievers' settings and the challengers, and even inside those tables the resource bounds
(times, sizes, prices, budgets, where a secret is sent) are the base commit's. Everything
else is the base commit's: a pull request must not loosen its own gate, widen its own
access, or lift its own bounds.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.config.split import from_base, proposals
from retrieval_eval.config.table import rows
from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.load.input_files import reading_within
from retrieval_eval.settings import RunSettings, read_settings, resolve_environment
from retrieval_eval.trust.secrets import protect_process

# The settings naming files the run writes; each must resolve inside the repository unless
# the user typed it on the command line. A file written atomically (the baseline, the
# history) replaces a link rather than following it, so its folder is what counts.
WRITTEN_PATHS = tuple(row.key for row in rows() if row.path in ("written", "atomic"))
ATOMIC_FILES = tuple(row.key for row in rows() if row.path == "atomic")


@dataclass(frozen=True)
class BaseCommit:
    """What a pull request's base commit configures (read, not yet resolved)."""

    settings: RunSettings
    origin: str  # "retrieval-eval.toml at the base commit abc1234"
    configured: bool  # False: the base commit has no configuration file (the defaults)


@dataclass(frozen=True)
class Prepared:
    """The run's settings, and what they were made from."""

    settings: RunSettings
    # On a pull request: (the setting and the base commit's value, the pull request's value)
    # for every gate or trust setting the pull request changes.
    proposed: tuple[tuple[str, str], ...] = ()
    gate_origin: str | None = None  # where the gate's settings came from; None: this checkout


def withhold(*settings: RunSettings | None) -> None:
    """Step 2: take every named secret out of the environment children inherit."""
    names = [name for s in settings if s is not None for name in s.secret_env]
    protect_process(patterns=tuple(dict.fromkeys(names)))


def prepare(
    *,
    workdir: Path,
    config_file: Path | None,
    overrides: Mapping[str, object],
    overrides_source: str = "command line",
    typed_inputs: Sequence[Path] = (),
    typed_outputs: Sequence[Path] = (),
    base: BaseCommit | None = None,
    gate_from_base: bool = True,
    written: Sequence[str] = WRITTEN_PATHS,
) -> Prepared:
    """Steps 1 to 4. ``typed_inputs`` and ``typed_outputs`` were typed on the command line:
    the user's own choice, readable (inputs) or writable (outputs) wherever they are.
    ``written`` names the settings the command writes to (``beir`` writes only the cache);
    only those are held to the repository.
    ``base`` is a pull request's base commit; with ``gate_from_base`` its gate settings are
    used too (not for the adoption run)."""
    try:
        own = read_settings(  # step 1: nothing it names in the environment is read yet
            workdir=workdir,
            config_file=config_file,
            overrides=overrides,
            overrides_source=overrides_source,
        )
    except RetrievalEvalError:
        withhold(base.settings if base is not None else None)  # even when nothing runs
        raise
    withhold(own, base.settings if base is not None else None)
    proposed: tuple[tuple[str, str], ...] = ()
    origin = None
    if base is not None:
        settings = from_base(own, base.settings, gate_from_base=gate_from_base)
        proposed = proposals(own, settings, workdir.resolve())
        origin = base.origin
    else:
        settings = own
    if typed_inputs:
        resolved = tuple(Path(p).resolve() for p in typed_inputs)
        settings = settings.model_copy(
            update={"outside_roots": (*settings.outside_roots, *resolved)}
        )
    check_written_paths(settings, allowed=typed_outputs, written=written)
    settings = resolve_environment(settings, environ=os.environ)
    return Prepared(settings=settings, proposed=proposed, gate_origin=origin)


@contextmanager
def prepared_run(
    *,
    workdir: Path,
    config_file: Path | None,
    overrides: Mapping[str, object],
    overrides_source: str = "command line",
    typed_inputs: Sequence[Path] = (),
    typed_outputs: Sequence[Path] = (),
) -> Iterator[Prepared]:
    """``prepare``, then step 5 for as long as the ``with`` block runs: every command that
    runs a retriever or reads the configured corpus does so inside this block."""
    ready = prepare(
        workdir=workdir,
        config_file=config_file,
        overrides=overrides,
        overrides_source=overrides_source,
        typed_inputs=typed_inputs,
        typed_outputs=typed_outputs,
    )
    with within_roots(ready.settings):
        yield ready


@contextmanager
def within_roots(settings: RunSettings) -> Iterator[None]:
    """Step 5: files are read only within the repository and ``outside_roots``."""
    roots = settings.input_roots()
    if roots is None:
        yield
        return
    with reading_within(roots):
        yield


def check_written_paths(
    settings: RunSettings, *, allowed: Sequence[Path] = (), written: Sequence[str] = WRITTEN_PATHS
) -> None:
    """Every path the run writes must stay inside the repository (symlinks followed), unless
    it was typed on the command line (``allowed``). A file written atomically (the baseline,
    the history) replaces a link rather than following it, so its folder is what counts;
    a folder written into (the reports, the cache) counts itself."""
    if settings.repository is None:
        return
    root = settings.repository.resolve()
    typed = {Path(p).resolve() for p in allowed}
    for name in written:
        value: object = settings
        for step in name.split("."):  # `judged.judgments` is a key of a table
            value = getattr(value, step)
        if value is None:
            continue
        assert isinstance(value, str | Path)
        path = Path(value)
        if path.resolve() in typed or Path(os.path.normpath(path)) in typed:
            continue
        checked = path.parent if name in ATOMIC_FILES else path
        if not checked.resolve().is_relative_to(root):
            named = Path(os.path.normpath(path))
            inside = named.is_relative_to(root)
            shown = named.relative_to(root) if inside else named
            raise ConfigError(
                f"`{name}` must name a path inside the repository; {shown} "
                + ("resolves outside it (through a symbolic link)" if inside else "is outside it")
            )
