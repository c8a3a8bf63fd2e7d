"""A setting is one declaration: the flag of each command it names, the Action input, the
documentation's tables and the pull request's trust split all come from it.

A throwaway setting is declared once, on ``RunSettings`` itself (type, default, bounds and
its ``Option``), and each consumer of the option table is shown to pick it up: the
installed command line shows its flag on the commands the declaration names and on no
other, and parses it into the settings; the Action declares its input and converts it by
the setting's bounds; docs/configuration.md's tables gain its row; and on a pull request it
is read from the base commit (nothing declared it under test).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import click
import pytest
from click.testing import CliRunner
from pydantic import Field
from pydantic.fields import FieldInfo

from retrieval_eval.action.declared import OWN_INPUTS, action_yml_inputs, setting_inputs
from retrieval_eval.action.inputs import input_overrides
from retrieval_eval.cli import cli
from retrieval_eval.config.flags import SettingFlag
from retrieval_eval.config.markdown import key_table, origin_table
from retrieval_eval.config.split import from_base
from retrieval_eval.config.table import (
    BOUND_NAME,
    command_rows,
    commit_of,
    retriever_bounds,
    rows,
)
from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.settings import Commit, Option, RunSettings

# The commands the throwaway's declaration gives its flag to.
THROWAWAY_COMMANDS = ("validate", "compare")
_COMMANDS_PACKAGE = "retrieval_eval.commands."


@pytest.fixture
def throwaway() -> Iterator[None]:
    """``throwaway_s`` declared on ``RunSettings``, the one place a setting is declared, as
    settings.py declares each; the command modules are then imported afresh, as a new
    process would, so their flags are made from the table that holds it. Both undone after.
    """
    declared = FieldInfo.from_annotated_attribute(
        Annotated[
            float,
            Option(
                "A throwaway bound, in seconds.", commands=THROWAWAY_COMMANDS, action_input=True
            ),
        ],
        Field(default=3.0, gt=0.0, le=60.0),
    )
    imported = {n: m for n, m in sys.modules.items() if n.startswith(_COMMANDS_PACKAGE)}
    RunSettings.__pydantic_fields__["throwaway_s"] = declared
    RunSettings.model_rebuild(force=True)
    _forget_commands()
    try:
        yield
    finally:
        del RunSettings.__pydantic_fields__["throwaway_s"]
        RunSettings.model_rebuild(force=True)
        _forget_commands()
        sys.modules.update(imported)
        for name, module in imported.items():
            parent, _, child = name.rpartition(".")
            setattr(sys.modules[parent], child, module)


def _forget_commands() -> None:
    for name in [n for n in sys.modules if n.startswith(_COMMANDS_PACKAGE)]:
        del sys.modules[name]


def installed_commands(
    group: click.Group = cli, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[str, click.Command]]:
    """Every command of the installed CLI by the name a user types (``baseline update``),
    each as ``retrieval-eval`` loads it."""
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        if isinstance(command, click.Group):
            yield from installed_commands(command, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), command


def helped(name: str) -> str:
    """``retrieval-eval NAME --help``, one space between words."""
    result = CliRunner().invoke(cli, [*name.split(), "--help"], prog_name="retrieval-eval")
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


@pytest.mark.usefixtures("throwaway")
def test_a_new_settings_flag_is_on_the_commands_its_declaration_names_and_no_other() -> None:
    names = [name for name, _ in installed_commands()]
    assert set(THROWAWAY_COMMANDS) <= set(names)
    for name in names:
        text = helped(name)
        flag = "--throwaway-s FLOAT A throwaway bound, in seconds. Default: throwaway_s in the "
        shown = f"{flag}config file, else 3." in text
        assert shown is (name in THROWAWAY_COMMANDS), name
        if name not in THROWAWAY_COMMANDS:
            assert "throwaway" not in text, name


@pytest.mark.usefixtures("throwaway")
def test_a_new_settings_flag_sets_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`validate --throwaway-s` reaches the settings: out of the declared bounds it is the
    setting's error; inside them the run is the one without the flag."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    bad = runner.invoke(cli, ["validate", "--throwaway-s", "600"])
    assert isinstance(bad.exception, ConfigError), bad.output
    assert "bad value for 'throwaway_s': Input should be less than or equal to 60" in str(
        bad.exception
    )
    plain = runner.invoke(cli, ["validate"])
    given = runner.invoke(cli, ["validate", "--throwaway-s", "7.5"])
    assert (given.exit_code, given.output, str(given.exception)) == (
        plain.exit_code,
        plain.output,
        str(plain.exception),
    )


@pytest.mark.usefixtures("throwaway")
def test_a_new_setting_is_an_action_input(tmp_path: Path) -> None:
    [spec] = [s for s in setting_inputs() if s.name == "throwaway-s"]
    assert spec.default == ""
    assert spec.description.endswith("Empty: from the config file (`throwaway_s`), else `3`.")
    action_yml = action_yml_inputs((*setting_inputs(), *OWN_INPUTS))
    assert "\n  throwaway-s:\n    description: 'A throwaway bound, in seconds." in action_yml
    assert input_overrides({"INPUT_THROWAWAY-S": "7.5"}, tmp_path) == {"throwaway_s": 7.5}
    assert input_overrides({"INPUT_THROWAWAY-S": ""}, tmp_path) == {}
    with pytest.raises(ConfigError) as bad:
        input_overrides({"INPUT_THROWAWAY-S": "600"}, tmp_path)
    assert "input `throwaway-s`: accepts a number from 0 to 60, got '600'" in str(bad.value)


@pytest.mark.usefixtures("throwaway")
def test_a_new_setting_is_in_the_documentations_tables() -> None:
    row = (
        "| `throwaway_s` | base (always) | `3` | `--throwaway-s`, input `throwaway-s` | "
        "A throwaway bound, in seconds. |"
    )
    assert row in origin_table().splitlines()
    key_row = "| `throwaway_s` | `3` | A throwaway bound, in seconds. |"
    assert key_row in key_table().splitlines()


@pytest.mark.usefixtures("throwaway")
def test_on_a_pull_request_an_undeclared_commit_is_the_base_commits() -> None:
    base = RunSettings(throwaway_s=3.0)  # type: ignore[call-arg]
    own = RunSettings(throwaway_s=60.0, tolerance=0.5)  # type: ignore[call-arg]
    used = from_base(own, base, gate_from_base=True)
    assert used.throwaway_s == 3.0  # type: ignore[attr-defined]
    assert used.tolerance == 0.05  # a gate setting: the base commit's
    adopted = from_base(own, base, gate_from_base=False)
    assert (adopted.throwaway_s, adopted.tolerance) == (3.0, 0.5)  # type: ignore[attr-defined]


def test_without_the_declaration_nothing_has_the_throwaway() -> None:
    """What the fixture added, it took away: the real table, CLI, Action and docs."""
    assert "throwaway_s" not in RunSettings.model_fields
    assert all("throwaway" not in helped(name) for name in THROWAWAY_COMMANDS)
    assert "throwaway-s" not in {s.name for s in setting_inputs()}
    assert "throwaway_s" not in origin_table() + key_table()


def test_each_command_has_the_settings_flags_the_table_gives_it() -> None:
    """The installed commands' settings flags are the table's, command by command; every
    command a declaration names is one a user can type; no flag is declared twice."""
    installed = dict(installed_commands())
    named = {command for row in rows() for command in row.commands}
    assert named <= set(installed), named - set(installed)
    for name, command in installed.items():
        flags = [p.row.key for p in command.params if isinstance(p, SettingFlag)]
        assert flags == [row.key for row in command_rows(name)], name
        options = [o for p in command.params for o in (*p.opts, *p.secondary_opts)]
        assert len(options) == len(set(options)), name


def test_a_flag_name_needs_a_command_to_take_it() -> None:
    class Stray(RunSettings):
        stray: Annotated[int, Option("A flag no command takes.", flag="--stray")] = 0

    with pytest.raises(ValueError, match="`stray` names a flag but no command that takes it"):
        rows(Stray)


def test_every_setting_is_declared_and_the_table_names_each_once() -> None:
    keys = [row.key for row in rows()]
    assert len(keys) == len(set(keys))
    fields = {name for name in RunSettings.model_fields if name != "repository"}
    assert fields == {key for key in keys if "." not in key}


def test_only_the_retriever_tables_and_challengers_are_the_pull_requests() -> None:
    under_test = {row.key for row in rows() if row.commit is Commit.PULL_REQUEST}
    assert under_test == {"dataset_retrievers", "retrievers", "challengers"}


@pytest.mark.parametrize(
    "path",
    [
        ("retrievers", "hybrid", "claude", "timeout_s"),
        ("retrievers", "hybrid", "claude", "input_usd_per_mtok"),
        ("retrievers", "hybrid", "claude", "base_url"),
        ("retrievers", "custom", "timeout_s"),
        ("retrievers", "dense", "batch_size"),
        ("retrievers", "dense", "token_budget"),
        ("retrievers", "http", "url"),
        ("retrievers", "http", "headers_env"),
        ("retrievers", "http", "concurrency"),
        ("retrievers", "postgres", "dsn_env"),
        ("retrievers", "lancedb", "uri"),
        ("retrievers", "milvus", "uri"),
        ("retrievers", "qdrant", "api_key_env"),
        ("challengers", "mine", "retrievers", "http", "timeout_s"),
        ("judge", "input_usd_per_mtok"),
        ("judge", "max_cost_usd"),
        ("time_limit_s",),
    ],
)
def test_bounds_inside_the_pull_requests_tables_are_the_base_commits(
    path: tuple[str, ...],
) -> None:
    assert commit_of(path) is Commit.BASE


@pytest.mark.parametrize(
    "path",
    [
        ("retrievers", "bm25", "k1"),
        ("retrievers", "hybrid", "alpha"),
        ("retrievers", "custom", "command"),
        ("challengers", "mine", "retriever"),
        ("challengers", "mine", "retrievers", "dense", "model"),
    ],
)
def test_the_retrievers_own_settings_are_the_pull_requests(path: tuple[str, ...]) -> None:
    assert commit_of(path) is Commit.PULL_REQUEST


def test_every_retriever_bound_is_found_by_its_name() -> None:
    bounds = retriever_bounds(RetrieversConfig)
    for key in ("dense.batch_size", "custom.timeout_s", "http.url", "hybrid.claude.timeout_s"):
        assert key in bounds
    assert all(BOUND_NAME.search(key.rsplit(".", 1)[-1]) for key in bounds)
