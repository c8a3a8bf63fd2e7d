"""action.yml, the settings object and the README's input table must say the same thing.

An input is one declaration (``action/declared.py``): a throwaway one is added there and
action.yml's inputs, the README's table, the conversion and the secret check all take it.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from retrieval_eval.action.declared import (
    INPUT_TABLE_MARKERS,
    INPUTS,
    OUTPUTS,
    OWN_INPUTS,
    InputSpec,
    action_yml_inputs,
    boolean,
    choice,
    globs,
    in_workspace,
    input_table,
    seconds,
    with_action_yml_inputs,
)
from retrieval_eval.action.inputs import ActionSettings, parse_inputs
from retrieval_eval.config.markdown import between
from retrieval_eval.config.table import rows
from retrieval_eval.errors import ConfigError
from retrieval_eval.trust.child_env import is_withheld
from tests.support.markdown import table_rows

ROOT = Path(__file__).resolve().parents[2]


def action_yml() -> dict[str, object]:
    data = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def readme_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(
        r"<!-- action-reference:start -->(.*)<!-- action-reference:end -->", text, re.DOTALL
    )
    assert match, "README.md lacks the action-reference markers"
    return match.group(1)


def test_action_yml_declares_exactly_the_inputs_with_their_defaults_and_descriptions() -> None:
    declared = action_yml()["inputs"]
    assert isinstance(declared, dict)
    assert list(declared) == [spec.name for spec in INPUTS]
    for spec in INPUTS:
        assert declared[spec.name] == {
            "description": spec.description,
            "required": False,
            "default": spec.default,
        }


def test_action_yml_declares_the_outputs() -> None:
    declared = action_yml()["outputs"]
    assert isinstance(declared, dict)
    assert {name: value["description"] for name, value in declared.items()} == {
        spec.name: spec.description for spec in OUTPUTS
    }
    assert [spec.name for spec in OUTPUTS] == [
        "verdict",
        "report-json",
        "report-markdown",
        "report-html",
        "comment-url",
        "metrics",
        "commit-files",
    ]


def test_action_yml_runs_the_container_and_is_branded() -> None:
    data = action_yml()
    assert data["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert data["name"] == "retrieval-eval"
    assert isinstance(data["description"], str) and data["description"]
    assert set(data["branding"]) == {"icon", "color"}  # type: ignore[arg-type]


def test_every_input_is_a_settings_field_or_a_declared_setting() -> None:
    """An input is one of the Action's own (a field of ``ActionSettings``) or sets a run
    setting, declared on the setting in the option table; never both, never neither."""
    built_later = {"runner", "run", "config_error", "overrides"}
    fields = {f.name for f in dataclasses.fields(ActionSettings)} - built_later
    declared = {row.action_input for row in rows() if row.action_input is not None}
    assert not {name.replace("_", "-") for name in fields} & declared
    assert {name.replace("_", "-") for name in fields} | declared == {spec.name for spec in INPUTS}


def test_readme_input_table_matches() -> None:
    rows = table_rows(readme_block(), "input")
    assert [(name, default, description) for name, default, description in rows] == [
        (f"`{s.name}`", f"`{s.default}`" if s.default else "(empty)", s.description) for s in INPUTS
    ]


def test_action_yml_and_the_pages_input_tables_are_written_from_the_declarations() -> None:
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert with_action_yml_inputs(text, action_yml_inputs()) == text, (
        "rewrite action.yml's inputs and outputs: python -c 'from retrieval_eval.action.declared "
        "import *; print(action_yml_inputs())'"
    )
    for page in ("README.md", "docs/action.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        assert between(text, INPUT_TABLE_MARKERS) == input_table(), (
            f"rewrite {page}'s input table: python -c 'import pathlib; from retrieval_eval."
            "action.declared import *; from retrieval_eval.config.markdown import "
            f'replace_between; p = pathlib.Path("{page}"); p.write_text(replace_between('
            "p.read_text(), INPUT_TABLE_MARKERS, input_table()))'"
        )


THROWAWAY = InputSpec(
    "throwaway-level",
    "low",
    "A throwaway knob. `low` or `high`.",
    choice("low", "high"),
)
THROWAWAY_SECRET = InputSpec("throwaway-key", "", "A throwaway credential.", secret=True)


def test_a_new_input_is_one_declaration(tmp_path: Path) -> None:
    """Declared once, the throwaway input is in action.yml, in the README's table, and
    converted (and refused) by its own parser."""
    inputs = (*INPUTS, THROWAWAY)
    declared = yaml.safe_load(action_yml_inputs(inputs))["inputs"]
    assert declared["throwaway-level"] == {
        "description": "A throwaway knob. `low` or `high`.",
        "required": False,
        "default": "low",
    }
    assert input_table(inputs).splitlines()[-1] == (
        "| `throwaway-level` | `low` | A throwaway knob. `low` or `high`. |"
    )
    assert "throwaway-level" not in action_yml_inputs()
    specs = (*OWN_INPUTS, THROWAWAY)
    env = {"INPUT_THROWAWAY-LEVEL": " high ", "INPUT_GITHUB-TOKEN": "t0ken"}
    assert parse_inputs(env, tmp_path, specs)["throwaway_level"] == "high"
    assert parse_inputs({"INPUT_GITHUB-TOKEN": "t0ken"}, tmp_path, specs)["throwaway_level"] == (
        "low"
    )
    with pytest.raises(ConfigError) as bad:
        parse_inputs({**env, "INPUT_THROWAWAY-LEVEL": "max"}, tmp_path, specs)
    assert "input `throwaway-level`: accepts low | high, got 'max'" in str(bad.value)


def secrets_reaching_a_child(inputs: tuple[InputSpec, ...]) -> list[str]:
    """The runner variables of secret inputs a child process would still see."""
    return [
        name
        for spec in inputs
        if spec.secret
        for name in spec.env_names
        if not is_withheld(name, ())
    ]


def test_every_secret_input_is_withheld_from_the_retriever() -> None:
    assert [spec.name for spec in INPUTS if spec.secret] == ["github-token"]
    assert secrets_reaching_a_child(INPUTS) == []
    # A new secret input is caught until trust/child_env.py withholds it.
    assert secrets_reaching_a_child((*INPUTS, THROWAWAY_SECRET)) == [
        "INPUT_THROWAWAY-KEY",
        "INPUT_THROWAWAY_KEY",
    ]


def test_each_parser_gives_its_fields_type(tmp_path: Path) -> None:
    """An input's declared default, converted by its parser, is a value of its field (the
    token's default is an expression the runner fills in)."""
    hints = typing.get_type_hints(ActionSettings)
    for spec in OWN_INPUTS:
        value = spec.parse("t0ken" if spec.secret else spec.default, tmp_path)
        TypeAdapter(hints[spec.attribute]).validate_python(value, strict=True)


@given(st.lists(st.text(alphabet="ab*/!. \t", min_size=0, max_size=8), max_size=6))
def test_globs_are_the_non_blank_lines_stripped_or_a_bare_bang_is_refused(
    lines: list[str],
) -> None:
    text = "\n".join(lines)
    kept = [line.strip() for line in lines if line.strip()]
    if any(line == "!" for line in kept):
        with pytest.raises(ValueError, match="bare `!`"):
            globs(text, Path("."))
    else:
        assert globs(text, Path(".")) == tuple(kept)


@given(st.text(max_size=12))
def test_a_boolean_is_true_or_false_in_any_case(value: str) -> None:
    if value.lower() in {"true", "false"}:
        assert boolean(value, Path(".")) is (value.lower() == "true")
    else:
        with pytest.raises(ValueError, match=r"accepts true \| false"):
            boolean(value, Path("."))


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_seconds_are_between_0_and_3600(number: float) -> None:
    if 0.0 <= number <= 3600.0:
        assert seconds(repr(number), Path(".")) == number
    else:
        with pytest.raises(ValueError, match="from 0 to 3600"):
            seconds(repr(number), Path("."))


@given(st.lists(st.sampled_from(["a", "b", "..", ".", "/", "c/../.."]), min_size=1, max_size=6))
def test_a_path_input_never_leaves_the_workspace(parts: list[str]) -> None:
    workspace = Path("/github/workspace")  # where the runner mounts it; nothing is read
    value = "".join(parts)
    try:
        named = in_workspace(value, workspace)
    except ValueError as error:
        assert "accepts a path inside the repository" in str(error)
    else:
        assert named.is_relative_to(workspace)


def test_readme_output_table_matches() -> None:
    rows = table_rows(readme_block(), "output")
    assert rows == [[f"`{s.name}`", s.description] for s in OUTPUTS]


def test_the_documented_workflows_are_valid_yaml_using_the_action() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", readme_block(), re.DOTALL)
    workflows = [yaml.safe_load(block) for block in blocks]
    publish = next(w for w in workflows if "workflow_run" in w[True])  # `on:` parses as True
    steps = publish["jobs"]["publish"]["steps"]
    assert steps[-1]["with"] == {"mode": "publish"}
    assert publish["permissions"] == {
        "actions": "read",
        "pull-requests": "write",
        "statuses": "write",
    }


def test_docs_action_md_outputs_table_matches_too() -> None:
    text = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    assert table_rows(text, "output") == table_rows(readme_block(), "output")
