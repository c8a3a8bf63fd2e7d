"""``ActionSettings``: every Action input and runner variable, converted and checked once.

Built from a mapping (the process environment at the edge, a dict in tests).
The Action's own inputs are converted by their declarations (``action/declared.py``:
each names its parser), into the fields of the same names. An input that sets a run
setting is declared on the setting (the option table, ``retrieval_eval.config``): it
defaults to empty in ``action.yml``, empty means "not given", and a given value is
converted by the setting's own type and bounds into ``overrides``.
``action.plan.build_plan`` then builds the run's settings once:
built-in default < configuration file < non-empty input.
Every bad value is collected, so one failed run lists all of them, each naming
the input and what it accepts. The token is a ``SecretStr``: it never shows in
a repr, a log line or an error message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr, TypeAdapter, ValidationError

from retrieval_eval.action.declared import (
    INPUTS,
    OWN_INPUTS,
    InputSpec,
    Mode,
    optional_path,
)
from retrieval_eval.config.flags import nested
from retrieval_eval.config.table import Row, rows
from retrieval_eval.errors import ConfigError
from retrieval_eval.settings import RunSettings
from retrieval_eval.vocabulary import MODEL_DIR_ENV

CommentMode = Literal["update", "new", "off"]
BaselineSource = Literal["base", "workspace"]
BaselineUpdate = Literal["fixed", "ratchet"]

_SPECS: dict[str, InputSpec] = {spec.name: spec for spec in INPUTS}
_ORDER: dict[str, int] = {spec.name: index for index, spec in enumerate(INPUTS)}
T = TypeVar("T")


@dataclass(frozen=True)
class RunnerContext:
    """What the runner says about this job (``GITHUB_*`` variables)."""

    event_name: str
    event_path: Path
    repository: str
    sha: str
    api_url: str
    server_url: str
    run_id: str
    workspace: Path
    # Set by the container image: the runner replaces HOME, so the model cannot live under it.
    model_dir: Path | None = None
    # The judge's key, from the step's `env` rather than an input: that is how secrets are
    # passed, and a fork's pull_request run gets none.
    anthropic_api_key: SecretStr | None = None
    # RUNNER_DEBUG=1 (a re-run with debug logging): tracebacks of unexpected errors are logged.
    debug: bool = False

    @property
    def run_url(self) -> str:
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"


@dataclass(frozen=True)
class ActionSettings:
    """What the inputs and the runner say, converted and checked; never changed afterwards.
    The run's settings (defaults < config file < inputs) are the run plan's
    (``action/plan.py``). One field per own input, of the type its parser gives; the
    defaults are the declarations' (``action/declared.py``), so no field has one here."""

    config: Path | None
    paths: tuple[str, ...]
    fail_on_regression: bool
    github_token: SecretStr
    comment: CommentMode
    comment_id: str
    accept_label: str  # "": no regression can be accepted
    status_context: str
    baseline_source: BaselineSource
    mode: Mode
    shard: str  # "I/N"; parsed where it is used
    shard_artifacts: Path | None
    github_retry_seconds: float
    runner: RunnerContext
    # The run settings the inputs (and the variables the option table names) set, nested as
    # the configuration file nests them; an empty input sets nothing.
    overrides: Mapping[str, Any]


class _Collector:
    """Converts inputs one by one, remembering every problem instead of stopping at the first."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.problems: list[tuple[int, str]] = []  # (declaration order, message)
        self.specs = dict(_SPECS)

    def raw(self, name: str) -> str:
        spec = self.specs[name]
        value = self.env.get(spec.env_name)
        # The runner always passes declared inputs; a missing one means "not run by the runner".
        return (value if value is not None else spec.default).strip()

    def convert(self, name: str, converter: Callable[[str], T], fallback: T) -> T:
        try:
            return converter(self.raw(name))
        except ValueError as error:
            self.problems.append((_ORDER.get(name, len(_ORDER)), f"input `{name}`: {error}"))
            return fallback

    def inputs(self, specs: tuple[InputSpec, ...], workspace: Path) -> dict[str, Any]:
        """Each input of ``specs`` converted by its own parser, by its attribute name; one
        that does not convert is left out and its problem kept."""
        values: dict[str, Any] = {}
        for spec in specs:
            self.specs.setdefault(spec.name, spec)
            try:
                values[spec.attribute] = spec.parse(self.raw(spec.name), workspace)
            except ValueError as error:
                order = _ORDER.get(spec.name, len(_ORDER))
                self.problems.append((order, f"input `{spec.name}`: {error}"))
        return values

    def runner(self, variable: str, *, required: bool = True) -> str:
        value = self.env.get(variable, "").strip()
        if required and not value:
            self.problems.append(
                (
                    -1,
                    f"{variable} is not set: "
                    "`retrieval-eval action` runs as a step of a GitHub Actions job",
                )
            )
        return value


def setting_overrides(
    c: _Collector, workspace: Path, model: type[BaseModel] = RunSettings
) -> dict[str, Any]:
    """The run settings the inputs give, each converted by its setting's type and bounds;
    a path must stay inside the workspace. Then the variables the table names (the image's
    model folder), which the inputs outrank."""
    values: dict[str, Any] = {}
    for row in rows(model):
        if row.env is not None and (variable := c.runner(row.env, required=False)):
            values[row.key] = Path(variable) if row.path is not None else variable
    for row in rows(model):
        if row.action_input is None:
            continue
        name = row.action_input
        if name not in c.specs:
            c.specs[name] = InputSpec(name, "", row.doc)
        converted: object = (
            c.convert(name, lambda v: optional_path(v, workspace), None)
            if row.path is not None
            else c.convert(name, _setting_value(row), None)
        )
        if converted is not None:
            values[row.key] = converted
    return nested(values)


def _setting_value(row: Row) -> Callable[[str], object]:
    """An input's text as the setting's value: empty is "not given"; anything else must be
    what the setting accepts."""
    form: Any = Annotated[row.type, *row.constraints] if row.constraints else row.type
    adapter: TypeAdapter[Any] = TypeAdapter(form)
    accepts = _accepts(row)

    def convert(value: str) -> object:
        if not value:
            return None
        try:
            return adapter.validate_python(value, strict=False)
        except ValidationError:
            raise ValueError(f"accepts {accepts}, got {value!r}") from None

    return convert


def _accepts(row: Row) -> str:
    plain = _plain(row.type)
    if get_origin(plain) is Literal:
        return " | ".join(str(a) for a in get_args(plain))
    if plain is bool:
        return "true | false"
    low = next((getattr(c, "ge", None) for c in row.constraints if hasattr(c, "ge")), None)
    low = (
        low
        if low is not None
        else next((getattr(c, "gt", None) for c in row.constraints if hasattr(c, "gt")), None)
    )
    high = next(
        (getattr(c, a) for c in row.constraints for a in ("le", "lt") if hasattr(c, a)), None
    )
    kind = "a whole number" if plain is int else "a number"
    if low is not None and high is not None:
        return f"{kind} from {low:g} to {high:g}"
    if low is not None:
        return f"{kind} of at least {low:g}"
    return kind


def _plain(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, UnionType):
        inner = [a for a in get_args(annotation) if a is not NoneType]
        return inner[0] if len(inner) == 1 else annotation
    return annotation


def input_overrides(
    env: Mapping[str, str], workspace: Path, model: type[BaseModel] = RunSettings
) -> dict[str, Any]:
    """Only the run settings the inputs in ``env`` set (``model``: the settings model whose
    option table declares the inputs); every bad one listed in one ``ConfigError``."""
    c = _Collector(env)
    overrides = setting_overrides(c, workspace, model)
    if c.problems:
        lines = "\n".join(f"  - {problem}" for _, problem in sorted(c.problems))
        raise ConfigError(f"the Action's inputs are not valid:\n{lines}")
    return overrides


def parse_inputs(
    env: Mapping[str, str], workspace: Path, specs: tuple[InputSpec, ...] = OWN_INPUTS
) -> dict[str, Any]:
    """The Action's own inputs in ``env``, each by its declaration (``action/declared.py``),
    by attribute name; every bad one listed in one ``ConfigError``."""
    c = _Collector(env)
    values = c.inputs(specs, workspace)
    _raise_problems(c)
    return values


def _raise_problems(c: _Collector) -> None:
    if c.problems:
        lines = "\n".join(f"  - {problem}" for _, problem in sorted(c.problems))
        raise ConfigError(f"the Action's inputs are not valid:\n{lines}")


def load_action_settings(env: Mapping[str, str]) -> ActionSettings:
    """Raise one ``ConfigError`` listing every bad input, or return the settings."""
    c = _Collector(env)
    workspace = Path(c.runner("GITHUB_WORKSPACE") or ".")
    runner = RunnerContext(
        event_name=c.runner("GITHUB_EVENT_NAME"),
        event_path=Path(c.runner("GITHUB_EVENT_PATH")),
        repository=c.runner("GITHUB_REPOSITORY"),
        sha=c.runner("GITHUB_SHA"),
        api_url=(c.runner("GITHUB_API_URL", required=False) or "https://api.github.com").rstrip(
            "/"
        ),
        server_url=(c.runner("GITHUB_SERVER_URL", required=False) or "https://github.com").rstrip(
            "/"
        ),
        run_id=c.runner("GITHUB_RUN_ID"),
        workspace=workspace,
        model_dir=Path(v) if (v := c.runner(MODEL_DIR_ENV, required=False)) else None,
        anthropic_api_key=SecretStr(v)
        if (v := c.runner("ANTHROPIC_API_KEY", required=False))
        else None,
        debug=c.runner("RUNNER_DEBUG", required=False) == "1",
    )
    own = c.inputs(OWN_INPUTS, workspace)
    overrides = setting_overrides(c, workspace)
    _raise_problems(c)
    # An empty `comment-id` is the status context's.
    own["comment_id"] = own["comment_id"] or own["status_context"]
    return ActionSettings(**own, runner=runner, overrides=overrides)
