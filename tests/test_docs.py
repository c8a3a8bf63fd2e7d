"""README.md and docs/ say what the product does: a new user adopts it from them alone.

Each test reads the documentation as a user would and checks it against the product: the
Action a workflow snippet names, links between pages, ...
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from retrieval_eval.author.scaffold import ACTION
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES
from retrieval_eval.settings import (
    DEFAULT_DATASET_RETRIEVERS,
    DEFAULT_THRESHOLDS,
    JudgeSettings,
    RunSettings,
    Threshold,
)

REPO = Path(__file__).resolve().parents[1]
CONSOLE_SCRIPT = Path(sys.executable).with_name("retrieval-eval")
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def page_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_every_workflow_snippet_uses_the_action_init_writes() -> None:
    """A snippet copied from any page must name the Action `retrieval-eval init` writes."""
    owner = ACTION.split("/")[0]
    wrong = [
        f"{path.relative_to(REPO)}: {match.group(0)}"
        for path in PAGES
        for match in re.finditer(r"uses:\s*([\w.-]+)/retrieval-eval@\S+", page_text(path))
        if match.group(1) != owner
    ]
    assert wrong == []


def table_rows(markdown: str, first_header: str) -> list[list[str]]:
    """The body rows of the first table whose header starts with `first_header`."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def first_code(cell: str) -> str:
    match = re.search(r"`([^`]*)`", cell)
    assert match, cell
    return match.group(1)


def test_the_dataset_files_table_names_the_default_retrievers() -> None:
    rows = table_rows(page_text(REPO / "docs" / "datasets.md"), "File")
    assert {first_code(row[0]): first_code(row[2]) for row in rows} == (
        DEFAULT_DATASET_RETRIEVERS
    )


def config_keys() -> dict[str, list[str]]:
    """docs/configuration.md's table of keys: key cell -> the other cells."""
    rows = table_rows(page_text(REPO / "docs" / "configuration.md"), "Key")
    return {row[0]: row[1:] for row in rows}


def test_configuration_names_every_retriever_where_it_lists_them() -> None:
    keys = config_keys()
    for key in ("`[dataset_retrievers]`", "`[retrievers.*]`"):
        meaning = keys[key][1]
        assert [name for name in RETRIEVER_NAMES if f"`{name}`" not in meaning] == [], key


def test_init_writes_a_config_whose_comment_names_every_retriever(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A\n\nsome text\n", encoding="utf-8")
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "init"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    written = (tmp_path / "retrieval-eval.toml").read_text(encoding="utf-8")
    comment = written.split("# [dataset_retrievers]")[0].rsplit("\n\n", 1)[1]
    assert [name for name in RETRIEVER_NAMES if name not in re.findall(r"[\w-]+", comment)] == []


def key_names(cell: str) -> list[str]:
    """`min_fixtures`, `min_human` -> both; `[dataset_thresholds."FILE"]` -> dataset_thresholds."""
    return [re.split(r"[.\[\]\"]", name.strip("[]"))[0] for name in re.findall(r"`([^`]+)`", cell)]


def test_configuration_lists_every_key_of_the_settings_and_no_other() -> None:
    documented = [name for cell in config_keys() for name in key_names(cell)]
    file_keys = [name for name in RunSettings.model_fields if name != "repository"]
    assert sorted(documented) == sorted(file_keys)


def toml_value(text: str) -> Any:
    return tomllib.loads(f"v = {text}")["v"]


def test_configuration_gives_the_settings_defaults() -> None:
    defaults = RunSettings()
    checked = 0
    for cell, (default_cell, _meaning) in config_keys().items():
        names = key_names(cell)
        spans = re.findall(r"`([^`]+)`", default_cell)
        in_words = re.sub(r"`[^`]+`", "", default_cell).strip(" ,")
        if in_words or len(spans) != len(names):
            continue  # described in words ("beside the baseline"), or pairs (checked below)
        for name, span in zip(names, spans, strict=True):
            value = getattr(defaults, name)
            if isinstance(value, Path):
                assert span == str(value), name
            elif isinstance(value, tuple):
                assert toml_value(span) == list(value), name
            else:
                assert toml_value(span) == value, name
            checked += 1
    assert checked >= 10
    retrievers = config_keys()["`[dataset_retrievers]`"][0]
    pairs = dict(re.findall(r'`([\w.]+) = "(\w+)"`', retrievers))
    assert pairs == DEFAULT_DATASET_RETRIEVERS


def section(markdown: str, heading: str) -> str:
    return markdown.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def test_the_thresholds_and_judge_blocks_show_the_defaults() -> None:
    text = page_text(REPO / "docs" / "configuration.md")
    block = re.search(r"```toml\n(.*?)```", section(text, "## Thresholds"), re.DOTALL)
    assert block is not None
    shown = tomllib.loads(block.group(1))["thresholds"]
    assert {name: Threshold(**bound) for name, bound in shown.items()} == DEFAULT_THRESHOLDS
    block = re.search(r"```toml\n(.*?)```", section(text, "## Judge"), re.DOTALL)
    assert block is not None
    assert JudgeSettings(**tomllib.loads(block.group(1))["judge"]) == JudgeSettings()
