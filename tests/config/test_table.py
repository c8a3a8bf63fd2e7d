"""A setting is one declaration: the flag, the Action input, the documentation's table and
the pull request's trust split all come from it.

A throwaway setting is declared on a settings model once (type, default, bounds and its
``Option``), and each consumer of the option table is shown to pick it up: the command
line parses its flag into an override, the Action declares its input and converts it by
the setting's bounds, docs/configuration.md's table gains its row, and on a pull request
it is read from the base commit (nothing declared it under test).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import click
import pytest
from click.testing import CliRunner
from pydantic import Field

from retrieval_eval.action.declared import INPUTS, setting_inputs
from retrieval_eval.action.inputs import input_overrides
from retrieval_eval.commands.beir import RETRIEVER_FLAGS
from retrieval_eval.commands.compare import COMPARE_FLAGS
from retrieval_eval.commands.generate import GENERATE_FLAGS
from retrieval_eval.commands.import_cmd import IMPORT_FLAGS
from retrieval_eval.commands.review import REVIEW_FLAGS
from retrieval_eval.commands.run import RUN_FLAGS
from retrieval_eval.commands.validate import VALIDATE_FLAGS
from retrieval_eval.config.flags import overrides_from_flags, settings_flags
from retrieval_eval.config.markdown import key_table, origin_table
from retrieval_eval.config.split import from_base
from retrieval_eval.config.table import BOUND_NAME, commit_of, retriever_bounds, rows
from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.settings import Commit, Option, RunSettings


class WithThrowaway(RunSettings):
    """The settings, plus one setting declared the way every setting is."""

    throwaway_s: Annotated[
        float, Option("A throwaway bound, in seconds.", flag=True, action_input=True)
    ] = Field(default=3.0, gt=0.0, le=60.0)


def test_the_flag_comes_from_the_declaration() -> None:
    seen: dict[str, Any] = {}

    @click.command()
    @settings_flags(("throwaway_s",), model=WithThrowaway)
    def command(**flags: Any) -> None:
        seen.update(overrides_from_flags(flags, ("throwaway_s",), model=WithThrowaway))

    result = CliRunner().invoke(command, ["--throwaway-s", "7.5"])
    assert result.exit_code == 0, result.output
    assert seen == {"throwaway_s": 7.5}
    helped = CliRunner().invoke(command, ["--help"]).output
    assert "A throwaway bound, in seconds." in helped and "else 3." in helped


# The settings each command takes flags for, as the command declares them.
COMMAND_FLAGS = {
    "run": RUN_FLAGS,
    "validate": VALIDATE_FLAGS,
    "compare": COMPARE_FLAGS,
    "beir": RETRIEVER_FLAGS,
    "tune": RETRIEVER_FLAGS,
    "generate": GENERATE_FLAGS,
    "review": REVIEW_FLAGS,
    "import queries": IMPORT_FLAGS,
}


@pytest.mark.parametrize("name", sorted(COMMAND_FLAGS))
def test_a_new_setting_is_a_flag_of_every_command_it_applies_to(name: str) -> None:
    """Naming the throwaway among a command's settings is all it takes: its flag, help and
    override come with it, beside the command's other settings flags, made the same way."""
    keys = (*COMMAND_FLAGS[name], "throwaway_s")
    seen: dict[str, Any] = {}

    @click.command(name)
    @settings_flags(keys, model=WithThrowaway)
    def command(**flags: Any) -> None:
        seen.update(overrides_from_flags(flags, keys, model=WithThrowaway))

    result = CliRunner().invoke(command, ["--throwaway-s", "7.5"])
    assert result.exit_code == 0, result.output
    assert seen == {"throwaway_s": 7.5}  # the command's other settings: none given, none set
    helped = " ".join(CliRunner().invoke(command, ["--help"]).output.split())
    assert "--throwaway-s FLOAT A throwaway bound, in seconds. Default: throwaway_s" in helped


def test_the_action_input_comes_from_the_declaration(tmp_path: Path) -> None:
    [spec] = [s for s in setting_inputs(WithThrowaway) if s.name == "throwaway-s"]
    assert spec.default == ""
    assert spec.description.endswith("Empty: from the config file (`throwaway_s`), else `3`.")
    assert input_overrides({"INPUT_THROWAWAY-S": "7.5"}, tmp_path, WithThrowaway) == {
        "throwaway_s": 7.5
    }
    assert input_overrides({"INPUT_THROWAWAY-S": ""}, tmp_path, WithThrowaway) == {}
    with pytest.raises(ConfigError) as bad:
        input_overrides({"INPUT_THROWAWAY-S": "600"}, tmp_path, WithThrowaway)
    assert "input `throwaway-s`: accepts a number from 0 to 60, got '600'" in str(bad.value)
    # The real table declares no such input.
    assert "throwaway-s" not in {s.name for s in INPUTS}


def test_the_documentation_table_comes_from_the_declaration() -> None:
    row = (
        "| `throwaway_s` | base (always) | `3` | `--throwaway-s`, input `throwaway-s` | "
        "A throwaway bound, in seconds. |"
    )
    assert row in origin_table(WithThrowaway).splitlines()
    assert "throwaway_s" not in origin_table()
    key_row = "| `throwaway_s` | `3` | A throwaway bound, in seconds. |"
    assert key_row in key_table(WithThrowaway).splitlines()
    assert "throwaway_s" not in key_table()


def test_on_a_pull_request_an_undeclared_commit_is_the_base_commits() -> None:
    base = WithThrowaway(throwaway_s=3.0)
    own = WithThrowaway(throwaway_s=60.0, tolerance=0.5)
    used = from_base(own, base, gate_from_base=True)
    assert used.throwaway_s == 3.0
    assert used.tolerance == 0.05  # a gate setting: the base commit's
    adopted = from_base(own, base, gate_from_base=False)
    assert (adopted.throwaway_s, adopted.tolerance) == (3.0, 0.5)  # a bound stays the base's


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
