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

On a pull request the settings that decide the verdict (the gate) and the settings that
decide what the pull request's code may see and reach (trust) are the base commit's: a
pull request must not loosen its own gate, nor widen its own access. Everything else, the
retriever and its settings included, is the system under test: the pull request's. So are
the challengers, which are only reported and never decide the verdict; the trust settings
inside each one's ``[retrievers]`` tables are the base commit's too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.load.input_files import reading_within
from retrieval_eval.retrieval.external.engines_config import (
    ENGINE_TRUST_SETTINGS,
    unconfigured_default,
)
from retrieval_eval.settings import RunSettings, read_settings, resolve_environment
from retrieval_eval.trust.secrets import protect_process

# Every setting that decides the verdict. On a pull request the base commit's value is used;
# the pull request's value is reported as a proposal that takes effect after merge.
GATE_SETTINGS = (
    "baseline",
    "tolerance",
    "measures",
    "gated",
    "k",
    "thresholds",
    "dataset_thresholds",
    "min_fixtures",
    "min_human",
    "seed",  # the paired test's p-values, which can decide the verdict
    "significance",
    "max_regressed_queries",
    "max_removed_share",
    "repeats",
)
# What the pull request's code may see and reach, and where the Anthropic key may be sent.
# `secret_env` keeps the union of both commits' names (withholding more is always safe);
# the others are the base commit's. Dotted names are keys inside a table.
TRUST_SETTINGS = (
    "secret_env",
    "outside_roots",
    "judge.enabled",
    "judge.base_url",
    "judge.max_cost_usd",
    "retrievers.hybrid.claude.base_url",
    *ENGINE_TRUST_SETTINGS,
)
# The settings naming files the run writes; each must resolve inside the repository unless
# the user typed it on the command line.
WRITTEN_PATHS = ("report_dir", "cache_dir", "baseline", "history")
ATOMIC_FILES = ("baseline", "history")


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


def get_setting(settings: RunSettings, dotted: str) -> object:
    """The (possibly nested) setting; inside a table that is not configured, its default."""
    value: object = settings
    for part in dotted.split("."):
        if value is None:
            return unconfigured_default(dotted)
        value = getattr(value, part)
    return value


def with_setting(settings: RunSettings, dotted: str, value: object) -> RunSettings:
    """A copy of ``settings`` with the (possibly nested) setting replaced."""
    head, _, rest = dotted.partition(".")
    if not rest:
        return settings.model_copy(update={head: value})
    inner = getattr(settings, head)
    return settings.model_copy(update={head: _with_attribute(inner, rest, value)})


def _with_attribute(model: object, dotted: str, value: object) -> object:
    """A copy of ``model`` with the nested setting replaced; a table that is not configured
    (None) stays so: its defaults are used, whatever the other commit's table said."""
    if model is None:
        return None
    head, _, rest = dotted.partition(".")
    if not rest:
        return model.model_copy(update={head: value})  # type: ignore[attr-defined]
    inner = getattr(model, head)
    return model.model_copy(update={head: _with_attribute(inner, rest, value)})  # type: ignore[attr-defined]


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
        names = (*GATE_SETTINGS, *TRUST_SETTINGS) if gate_from_base else TRUST_SETTINGS
        settings = _from_base(own, base.settings, names)
        proposed = _proposals(base.settings, own, names, workdir.resolve())
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
        value = getattr(settings, name)
        if value is None:
            continue
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


def _from_base(own: RunSettings, base: RunSettings, names: Sequence[str]) -> RunSettings:
    settings = own
    for name in names:
        value = get_setting(base, name)
        if name == "secret_env":
            value = tuple(dict.fromkeys((*base.secret_env, *own.secret_env)))
        settings = with_setting(settings, name, value)
    return _challengers_trusted(settings, base)


def _challengers_trusted(settings: RunSettings, base: RunSettings) -> RunSettings:
    """The pull request's challengers are evaluated (they are only reported), but each
    one's trust settings inside ``[retrievers]`` are the base commit's, as the gated
    retriever's are: a challenger must not send the Anthropic key elsewhere either."""
    challengers = {}
    for key, challenger in settings.challengers.items():
        retrievers = challenger.retrievers
        for name in (n for n in TRUST_SETTINGS if n.startswith("retrievers.")):
            dotted = name.removeprefix("retrievers.")
            retrievers = _with_attribute(retrievers, dotted, get_setting(base, name))  # type: ignore[assignment]
        challengers[key] = challenger.model_copy(update={"retrievers": retrievers})
    return settings.model_copy(update={"challengers": challengers})


def _proposals(
    base: RunSettings, own: RunSettings, names: Sequence[str], workspace: Path
) -> tuple[tuple[str, str], ...]:
    return tuple(
        change
        for name in names
        for change in _changes(name, get_setting(base, name), get_setting(own, name), workspace)
    )


def _changes(name: str, base: object, pr: object, workspace: Path) -> list[tuple[str, str]]:
    """(base, PR) as text, one pair per changed entry of a table, or one for a value."""
    if base == pr:
        return []
    if isinstance(base, Mapping) and isinstance(pr, Mapping):
        return [
            (f"{name}.{key}: {_show(base.get(key), workspace)}", _show(pr.get(key), workspace))
            for key in sorted({*base, *pr}, key=str)
            if base.get(key) != pr.get(key)
        ]
    return [(f"{name}: {_show(base, workspace)}", _show(pr, workspace))]


def _show(value: object, workspace: Path) -> str:
    if isinstance(value, Path):  # as the configuration file names it, not the runner's path
        inside = value.is_relative_to(workspace)
        return value.relative_to(workspace).as_posix() if inside else str(value)
    if value is None:
        return "(none)"
    if value is False:
        return "off"
    if value is True:
        return "on"
    if hasattr(value, "describe"):  # a threshold: "≥ 0.7"
        return str(value.describe())
    if hasattr(value, "model_dump"):
        value = value.model_dump(exclude_defaults=True)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_show(v, workspace) for v in value) + "]"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)
