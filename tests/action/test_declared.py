"""action.yml, the settings object and the README's input table must say the same thing."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import yaml

from retrieval_eval.action.declared import INPUTS, OUTPUTS
from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.config.table import rows
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


def test_docs_action_md_tables_match_too() -> None:
    text = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    assert table_rows(text, "input") == table_rows(readme_block(), "input")
    assert table_rows(text, "output") == table_rows(readme_block(), "output")
