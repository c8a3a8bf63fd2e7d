"""README.md and docs/ say what the product does: a new user adopts it from them alone.

Each test reads the documentation as a user would and checks it against the product: the
Action a workflow snippet names, links between pages, ...
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from retrieval_eval.action.event import COMMIT_EVENTS
from retrieval_eval.author.scaffold import ACTION
from retrieval_eval.config.markdown import (
    KEY_MARKERS,
    ORIGIN_MARKERS,
    between,
    key_table,
    origin_table,
)
from retrieval_eval.config.table import rows
from retrieval_eval.index.model_catalog import MODELS
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES
from retrieval_eval.settings import (
    DEFAULT_DATASET_RETRIEVERS,
    DEFAULT_THRESHOLDS,
    Commit,
    JudgeSettings,
    RunSettings,
    Threshold,
)
from retrieval_eval.trust.child_env import WITHHELD_BY_DEFAULT
from tests.support.contract import protocols
from tests.support.markdown import table_rows

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


def first_code(cell: str) -> str:
    match = re.search(r"`([^`]*)`", cell)
    assert match, cell
    return match.group(1)


def test_the_dataset_files_table_names_the_default_retrievers() -> None:
    rows = table_rows(page_text(REPO / "docs" / "datasets.md"), "File")
    documented = {first_code(row[0]): first_code(row[2]) for row in rows}
    assert documented == DEFAULT_DATASET_RETRIEVERS


def config_keys() -> dict[str, list[str]]:
    """docs/configuration.md's table of keys: key cell -> the other cells."""
    rows = table_rows(page_text(REPO / "docs" / "configuration.md"), "Key")
    return {row[0]: row[1:] for row in rows}


def test_configuration_names_every_retriever_where_it_lists_them() -> None:
    keys = config_keys()
    for key in ("`[dataset_retrievers]`", "`[retrievers]`"):
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


SUBCOMMAND_GROUPS = ("model", "import", "baseline", "cache")


def synopses() -> list[tuple[str, tuple[str, ...], str]]:
    """Each documented synopsis: (page, command words, the synopsis with its continuation lines).

    A synopsis is a line that starts with `retrieval-eval COMMAND` and shows optional flags
    in brackets (`[--k 100]`), inside a code block or a table cell.
    """
    found = []
    for path in PAGES:
        lines = page_text(path).splitlines()
        for number, line in enumerate(lines):
            start = line.find("retrieval-eval ")
            if start < 0 or "[-" not in line or not re.match(r"[|`\s]*$", line[:start]):
                continue
            text = line[start:].split("`")[0].split(" | ")[0]
            for following in lines[number + 1 :]:
                if not re.match(r"\s+\[", following):
                    break
                text += " " + following.strip()
            words = text.split()
            command = tuple(words[1:3] if words[1] in SUBCOMMAND_GROUPS else words[1:2])
            found.append((path.name, command, text))
    return found


class HelpOption:
    def __init__(self, names: list[str], default: str | None, choices: list[str]) -> None:
        self.names, self.default, self.choices = names, default, choices


def help_options(command: tuple[str, ...]) -> list[HelpOption]:
    """The command's options as `--help` shows them: names (aliases), default, choices."""
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), *command, "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    section = done.stdout.split("Options:\n", 1)[1]
    options = []
    for entry in re.split(r"\n(?=  -)", section):
        flat = " ".join(entry.split())
        head = re.split(r"\s{2,}", entry.strip())[0]
        names = re.findall(r"(?<![\w-])--?[a-zA-Z][\w-]*", head.split(" [")[0])
        if not names or "--help" in names:
            continue
        default = re.search(r"\[default: ([^;\]]+)", flat)
        choices = re.search(r" \[([\w|-]+)\]", head)
        options.append(
            HelpOption(
                names,
                default.group(1).strip() if default else None,
                choices.group(1).split("|") if choices else [],
            )
        )
    return options


def same_default(documented: str, shown: str | None) -> bool:
    if shown is None:
        return False
    try:
        return float(documented) == float(shown)
    except ValueError:
        return documented == shown


@pytest.mark.slow
def test_documented_synopses_match_the_commands_help() -> None:
    """Every flag a synopsis shows exists with the default it shows, and every flag of the
    command is shown: a user reading the page sees the command's whole interface."""
    checked = set()
    problems = []
    for page, command, text in synopses():
        options = help_options(command)
        by_name = {name: option for option in options for name in option.names}
        shown = re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)(?: ([^\s\]]+))?", text)
        for flag, value in shown:
            option = by_name.get(flag)
            if option is None:
                problems.append(f"{page}: {text[:40]}…: {flag} is not an option")
            elif (
                value
                and not value.isupper()
                and "=" not in value
                and value not in option.choices
                and f"[{flag} {value}]" in text
                and not same_default(value, option.default)
            ):
                problems.append(f"{page}: {flag} {value}: --help says {option.default}")
        flags = {flag for flag, _ in shown}
        missing = [option.names[-1] for option in options if not flags & set(option.names)]
        if missing:
            problems.append(f"{page}: retrieval-eval {' '.join(command)} lacks {missing}")
        checked.add(command)
    assert problems == []
    assert {("generate",), ("validate",), ("beir",), ("tune",), ("trec",)} <= checked


def test_the_flags_configuration_lists_are_options_of_run() -> None:
    text = page_text(REPO / "docs" / "configuration.md")
    layer = text.split("3. command-line flags", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"`(--[\w-]+)`", layer)
    options = {name for option in help_options(("run",)) for name in option.names}
    assert listed and [flag for flag in listed if flag not in options] == []


def test_beir_json_holds_exactly_the_documented_keys(tmp_path: Path) -> None:
    from tests.retrieval.service_helpers import tiny_beir

    text = page_text(REPO / "docs" / "retrievers.md")
    paragraph = text.split("`--json` writes them as one object:", 1)[1].split("`--run`", 1)[0]
    always, _, conditional = paragraph.partition(", plus ")
    summary = tmp_path / "summary.json"
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "beir", str(tiny_beir(tmp_path / "beir")), "--json", str(summary)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    written = set(json.loads(summary.read_text(encoding="utf-8")))
    assert written == set(re.findall(r"`([\w@.]+)`", always))
    assert not written & set(re.findall(r"`([\w@.]+)`", conditional))


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    found = set()
    in_code = False
    for line in page_text(path).splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line.lstrip("#").strip())
            found.add(re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-"))
    return found


def test_links_between_pages_resolve() -> None:
    """Relative links and their #anchors, in README.md, docs/ and action.yml's descriptions."""
    broken = []
    sources = [*PAGES, REPO / "action.yml"]
    for path in sources:
        text = page_text(path)
        targets = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'src="([^"]+)"', text)
        targets += (
            re.findall(r"\b(docs/[\w-]+\.md(?:#[\w-]+)?)", text) if path.suffix == ".yml" else []
        )
        for target in targets:
            if re.match(r"[a-z]+:", target):
                continue  # https://, mailto:
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part) if file_part else path
            if not resolved.exists():
                broken.append(f"{path.name}: {target}")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{path.name}: {target} (no such heading)")
    assert broken == []


# Files the pages name that a user's repository holds, not this one.
USER_FILES = {
    "datasets/README.md",
    "datasets/judged/queries.jsonl",
    "datasets/judged/judgments.jsonl",
}


def test_the_repository_files_the_pages_cite_exist() -> None:
    """A path such as `tests/author/test_quickstart.py` or `scripts/release.sh` must be in the
    repository a user clones: nothing beside it (no sibling folder) may be needed."""
    missing = []
    for path in [*PAGES, REPO / "action.yml"]:
        cited = re.findall(
            r"`((?:src|tests|scripts|bench|schema|requirements|examples|docker|datasets|\.ci)/"
            r"[^`\s:]*)`",
            page_text(path),
        )
        missing += [
            f"{path.name}: {name}"
            for name in cited
            if name not in USER_FILES and not (REPO / name.split("::")[0]).exists()
        ]
    assert missing == []


def test_nothing_tracked_reaches_outside_the_clone() -> None:
    """CI clones the repository alone into an empty folder (.ci/run): a test, script or page
    that reads a sibling folder would work only on a developer's machine."""
    sibling = "../" + "shared"
    tracked = (
        subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    offenders = []
    for name in filter(None, tracked):
        path = REPO / name
        if (
            path.is_file()
            and path.stat().st_size < 5_000_000
            and sibling.encode() in (path.read_bytes())
        ):
            offenders.append(name)
    assert offenders == []


def test_the_pages_name_every_event_that_evaluates_a_commit() -> None:
    readme = page_text(REPO / "README.md").split("<!-- action-reference:start -->")[1]
    sentence = readme.split("it evaluates", 1)[0].rsplit(". On ", 1)[1]
    action = page_text(REPO / "docs" / "action.md")
    keeping = section(action, "## Keeping the baseline up to date").split(", the baseline", 1)[0]
    for listed in (sentence, keeping):
        assert set(re.findall(r"`(\w+)`", listed)) == COMMIT_EVENTS, listed


def test_the_cranfield_import_runs_as_written(tmp_path: Path) -> None:
    """The commands under datasets.md's Cranfield example, from a copy of the shipped data."""
    text = page_text(REPO / "docs" / "datasets.md")
    block = text.split("<!-- cranfield-import:start -->")[1].split("<!-- cranfield-import:end -->")[
        0
    ]
    script = block.split("```sh\n", 1)[1].split("```", 1)[0]
    shutil.copytree(
        REPO / "tests" / "data" / "cranfield", tmp_path / "tests" / "data" / "cranfield"
    )
    outputs = []
    for line in script.splitlines():
        words = shlex.split(line)
        if words[0] == "retrieval-eval":
            words[0] = str(CONSOLE_SCRIPT)
        done = subprocess.run(
            line if ">" in words else words,
            shell=">" in words,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, (line, done.stderr)
        outputs.append(done.stdout + done.stderr)
    imported, validated = outputs[-2], outputs[-1]
    assert "(1,400 documents)" in imported
    assert "(225 fixtures, 1,612 judgments)" in imported
    assert "ok: 1 file, 225 fixtures" in validated


def test_the_pages_list_the_settings_a_pull_request_cannot_change_for_itself() -> None:
    """docs/configuration.md's table of which commit each setting is read from is the option
    table's, as ``retrieval_eval.config.markdown`` writes it; docs/action.md names the gate's
    settings as the table does."""
    configuration = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert between(configuration, ORIGIN_MARKERS) == origin_table(), (
        "regenerate the table: python -c 'from retrieval_eval.config.markdown import *; "
        "print(origin_table())'"
    )
    assert between(configuration, KEY_MARKERS) == key_table(), (
        "regenerate the table of keys: python -c 'from retrieval_eval.config.markdown "
        "import *; print(key_table())'"
    )
    action = page_text(REPO / "docs" / "action.md")
    listed = action.split("The settings that decide the verdict come from the base commit", 1)[1]
    listed = listed.split("(`config`", 1)[1].split("):", 1)[1].split(". ", 1)[0]
    gate = [row.key for row in rows() if row.commit is Commit.GATE and "." not in row.key]
    assert [name.strip("[]") for name in re.findall(r"`([^`]+)`", listed)] == gate


def test_every_page_lists_the_variables_always_withheld_from_the_retriever() -> None:
    """Three pages spell out what a retriever never sees; each must name all of it."""
    pages = {
        "configuration.md": "always withheld (",
        "action.md": "less its credentials:",
        "retrievers.md": "without the secrets:",
    }
    for name, lead in pages.items():
        text = page_text(REPO / "docs" / name).split(lead, 1)[1]
        listed = re.findall(r"`([A-Z_*-]+)`", text.split(", and ", 1)[0].split(")", 1)[0])
        assert listed == list(WITHHELD_BY_DEFAULT), name


def test_the_readme_names_every_dependency_pyproject_declares() -> None:
    """The README's Dependencies section says why each package is there: none may be missing."""
    project = tomllib.loads(page_text(REPO / "pyproject.toml"))["project"]
    declared = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        declared += extra
    names = {re.split(r"[\[<>=!~ ]", requirement, maxsplit=1)[0] for requirement in declared}
    readme = page_text(REPO / "README.md").split("## Dependencies", 1)[1].split("\n## ", 1)[0]
    assert sorted(n for n in names if n.lower() not in readme.lower()) == []


def test_the_readme_names_the_onnx_and_protobuf_the_model_pin_was_made_with() -> None:
    from retrieval_eval.index.model_install import PINNED_WITH_ONNX

    lock = page_text(REPO / "requirements" / "runtime.lock")
    protobuf = re.search(r"^protobuf==(\S+)", lock, re.MULTILINE)
    assert protobuf is not None
    readme = page_text(REPO / "README.md")
    assert f"pip install onnx=={PINNED_WITH_ONNX} protobuf=={protobuf.group(1)}" in readme
    assert f"onnx=={PINNED_WITH_ONNX} " in lock.replace(" \\\n", " ")


def retriever_tables() -> dict[str, dict[str, str]]:
    """docs/retrievers.md: each retriever's table of keys, key -> default cell."""
    text = page_text(REPO / "docs" / "retrievers.md")
    tables: dict[str, dict[str, str]] = {}
    for heading in re.finditer(r"^#{2,3} `([\w-]+)` —", text, re.MULTILINE):
        body = text[heading.end() :].split("\n## ", 1)[0].split("\n### ", 1)[0]
        if "| key |" not in body:
            continue
        table: dict[str, str] = {}
        for row in table_rows(body[body.index("| key |") :], "key"):
            keys = re.findall(r"`([\w-]+)`", row[0])
            values = row[1].split(", ") if len(keys) > 1 else [row[1]]
            if len(values) == len(keys):
                table.update(zip(keys, values, strict=True))
            else:
                table.update(dict.fromkeys(keys, ""))
        tables[heading.group(1)] = table
    return tables


def test_retrievers_tables_give_every_key_with_its_default() -> None:
    from pydantic_core import PydanticUndefined

    from retrieval_eval.retrieval.config import (
        Bm25Config,
        DenseConfig,
        FrameworkConfig,
        HybridConfig,
    )
    from retrieval_eval.retrieval.external.engines_config import (
        LanceDbConfig,
        MilvusConfig,
        QdrantConfig,
    )
    from retrieval_eval.retrieval.external.services_config import (
        ChromaConfig,
        HttpConfig,
        PostgresConfig,
        RunFileConfig,
    )

    models: dict[str, type[BaseModel]] = {
        "dense": DenseConfig,
        "bm25": Bm25Config,
        "hybrid": HybridConfig,
        "postgres": PostgresConfig,
        "chroma": ChromaConfig,
        "http": HttpConfig,
        "run-file": RunFileConfig,
        "qdrant": QdrantConfig,
        "lancedb": LanceDbConfig,
        "milvus": MilvusConfig,
        "langchain": FrameworkConfig,
        "llamaindex": FrameworkConfig,
    }
    tables = retriever_tables()
    assert sorted(tables) == sorted(models)
    subtables = {"claude", "custom"}  # the hybrid's reranker tables, documented in prose
    checked = 0
    for name, model in models.items():
        fields = {key for key in model.model_fields if key not in subtables}
        assert set(tables[name]) == fields, name
        for key, cell in tables[name].items():
            try:
                documented = toml_value(cell.strip("`"))
            except tomllib.TOMLDecodeError:
                continue  # described in words: "available cores", "—"
            field = model.model_fields[key]
            default = field.get_default(call_default_factory=True)
            assert default is not PydanticUndefined, (name, key)
            assert documented == default, (name, key)
            checked += 1
    assert checked >= 30


def test_every_toml_snippet_is_a_configuration_run_accepts(tmp_path: Path) -> None:
    """A snippet pasted into retrieval-eval.toml must load as `run` loads it (unknown keys
    and bad values are errors there), with the environment variables it names set."""
    from retrieval_eval.errors import ConfigError
    from retrieval_eval.settings import load_settings

    environ = {"SEARCH_DSN": "postgresql://localhost/x", "CHROMA_TOKEN": "t", "SEARCH_AUTH": "a"}
    snippets = [
        (path.name, block)
        for path in PAGES
        for block in re.findall(r"```toml\n(.*?)```", page_text(path), re.DOTALL)
    ]
    assert len(snippets) >= 10
    failures = []
    for number, (page, block) in enumerate(snippets):
        folder = tmp_path / str(number)
        folder.mkdir()
        (folder / "retrieval-eval.toml").write_text(block, encoding="utf-8")
        try:
            load_settings(
                workdir=folder,
                config_file=None,
                overrides={},
                home=folder,
                cores=1,
                environ=environ,
            )
        except ConfigError as error:
            failures.append(f"{page}: {error.message}")
    assert failures == []


def test_the_defaults_init_writes_as_comments_are_the_real_defaults(tmp_path: Path) -> None:
    """`retrieval-eval init` writes the defaults as commented lines; uncommented, each must
    restate the built-in default, or a user reading the file is told something false."""
    (tmp_path / "notes").mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / "notes" / name).write_text("# Note\n\ntext\n", encoding="utf-8")
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "init"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    table = ""
    restated: dict[str, dict[str, Any]] = {}
    for line in (tmp_path / "retrieval-eval.toml").read_text(encoding="utf-8").splitlines():
        header = re.match(r"#? ?\[([\w.]+)\]", line)
        if header:
            table = header.group(1)
            continue
        if not line.startswith("# "):
            continue
        try:
            restated.setdefault(table, {}).update(tomllib.loads(line[2:]))
        except tomllib.TOMLDecodeError:
            continue  # prose
    defaults = RunSettings()
    assert restated[""] and restated["thresholds"] and restated["dataset_retrievers"]
    for key, value in restated[""].items():
        default = getattr(defaults, key)
        assert value == (list(default) if isinstance(default, tuple) else default), key
    assert restated["dataset_retrievers"] == DEFAULT_DATASET_RETRIEVERS
    for name, bound in restated["thresholds"].items():
        assert Threshold(**bound) == DEFAULT_THRESHOLDS[name], name


def test_the_action_inputs_name_the_settings_defaults_they_fall_back_to() -> None:
    """`datasets: ''` means "from the config file, else `datasets`": that last value must be
    the settings' own default, as docs/configuration.md gives it."""
    from retrieval_eval.action.declared import INPUTS

    defaults = RunSettings()
    checked = 0
    for spec in INPUTS:
        fallback = re.search(
            r"Empty: from the config file \(`([^`]+)`\), else `([^`]+)`", spec.description
        )
        if fallback is None:
            continue
        value: Any = defaults
        for part in fallback.group(1).split("."):
            value = getattr(value, part)
        if isinstance(value, bool):
            shown = str(value).lower()
        elif isinstance(value, Path):
            shown = str(value)
        elif isinstance(value, str):
            shown = f'"{value}"'
        else:
            shown = f"{value:g}"
        assert fallback.group(2) == shown, spec.name
        checked += 1
    assert checked == 8


def test_report_md_lists_the_template_filters() -> None:
    from jinja2.sandbox import SandboxedEnvironment

    from retrieval_eval.render.markdown import template_environment

    text = page_text(REPO / "docs" / "report.md")
    paragraph = section(text, "## The template").split("Formatting helpers are filters:", 1)[1]
    documented = set(re.findall(r"`(\w+)`", paragraph))
    ours = set(template_environment().filters) - set(SandboxedEnvironment().filters)
    assert ours <= documented


def test_writing_a_retriever_is_exactly_the_contract_in_the_code() -> None:
    """docs/retrievers.md's "Writing a retriever" names every protocol of the retriever
    contract (retrieval/base.py, timed.py) with every one of its members, and nothing else."""
    text = section(page_text(REPO / "docs" / "retrievers.md"), "## Writing a retriever")
    declared = protocols()
    required = [re.split(r"[(:]", first_code(row[0]))[0] for row in table_rows(text, "Member")]
    assert "**Required: `Retriever`.**" in text
    assert required == list(declared["Retriever"][1])
    documented = {
        first_code(row[0]): re.findall(r"`(\w+)[(:]", row[1])
        for row in table_rows(text, "Protocol")
    }
    optional = {name: list(found[1]) for name, found in declared.items() if name != "Retriever"}
    assert documented == optional


def test_the_model_comparison_has_every_catalogued_model_and_the_command_that_made_it() -> None:
    """docs/model-comparison.md has a row for each model `[retrievers.dense] model` accepts
    and shows the command that generated it, bench/bench_models.py with options it has;
    docs/benchmarks.md's "Embedding models" table has a row for each model too."""
    text = page_text(REPO / "docs" / "model-comparison.md")
    header = next(line for line in text.splitlines() if line.startswith("| model |"))
    assert all(column in header for column in ("NDCG@10", "Recall@100", "texts/s", "size"))
    rows = table_rows(text, "model")
    assert [row[0].split()[0].strip("`") for row in rows] == list(MODELS)
    block = re.search(r"```sh\n(.*?)```", text, re.DOTALL)
    assert block is not None
    command = shlex.split(block.group(1).replace("\\\n", " "))
    assert command[:2] == [".venv/bin/python", "bench/bench_models.py"]
    usage = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_models.py"), "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    options = set(re.findall(r"--[\w-]+", usage))
    assert [flag for flag in command if flag.startswith("--") and flag not in options] == []

    benchmarks = section(page_text(REPO / "docs" / "benchmarks.md"), "### Embedding models")
    assert [row[0].strip("`") for row in table_rows(benchmarks, "model")] == list(MODELS)


# docs/architecture.md against the code: what it names exists, and its diagram is the layout.
ARCHITECTURE = REPO / "docs" / "architecture.md"
PACKAGE = REPO / "src" / "retrieval_eval"
# A path the page names from the repository's root rather than from the package.
REPO_FOLDERS = ("tests/", "bench/", "docs/", "scripts/", "examples/", "src/")
# A module or folder: `score/kernels.py`, `usecases/`, `tests/test_layout.py`.
PATH_NAME = re.compile(r"^[\w.-]+(?:/[\w.-]+)*(?:\.py|/)$")
# A function, class or setting as code spells it: snake_case or CamelCase, maybe dotted.
CODE_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
MERMAID_NODE = re.compile(r'(\w+)\["([^"]*)"\]')
MERMAID_ARROW = re.compile(r'\s*(?:-->|-\.->|--\s*"[^"]*"\s*-->|-\.\s*"[^"]*"\s*\.->)\s*')


def _architecture() -> tuple[str, str]:
    """The page without its diagram, and the diagram."""
    text = page_text(ARCHITECTURE)
    found = re.search(r"```mermaid\n(.*?)```", text, re.DOTALL)
    assert found is not None, "docs/architecture.md has no mermaid diagram"
    return text[: found.start()] + text[found.end() :], found.group(1)


def _named_paths(prose: str, diagram: str) -> set[str]:
    spans = set(re.findall(r"`([^`\n]+)`", prose))
    labels = re.findall(r'"([^"]*)"', diagram)
    words = {word.rstrip(",;:") for label in labels for word in label.split()}
    return {name for name in spans | words if PATH_NAME.match(name)}


def _missing_path(name: str) -> bool:
    root = REPO if name.startswith(REPO_FOLDERS) else PACKAGE
    path = root / name
    return not (path.is_dir() if name.endswith("/") else path.is_file())


def test_every_file_and_folder_the_architecture_names_exists() -> None:
    """A module moved or deleted leaves no sentence (or box of the diagram) naming it."""
    prose, diagram = _architecture()
    named = _named_paths(prose, diagram)
    assert len(named) > 50  # the page names the modules, and the check reads them
    assert sorted(name for name in named if _missing_path(name)) == []


def _is_code_name(token: str) -> bool:
    return bool(CODE_NAME.match(token)) and any(
        "_" in part.strip("_") or re.search(r"[a-z][A-Z]", part) for part in token.split(".")
    )


def test_every_function_class_and_setting_the_architecture_names_exists() -> None:
    """`run_shard`, `TRUST_SETTINGS`: a name the code no longer has is not on the page."""
    prose, _ = _architecture()
    source_words = {
        word for path in PACKAGE.rglob("*.py") for word in re.findall(r"\w+", page_text(path))
    }
    names = {token for token in re.findall(r"`([^`\n]+)`", prose) if _is_code_name(token)}
    assert {"RunSettings", "GatePolicy", "gate_policy", "search_and_measure"} <= names
    assert (
        sorted(name for name in names if any(part not in source_words for part in name.split(".")))
        == []
    )
    # Which spans count: code's spellings, not words or paths.
    assert _is_code_name("run_shard") and _is_code_name("RunnerFiles.record")
    assert not any(map(_is_code_name, ("pipeline", "report.json", "--tolerance", "I/N")))


def _diagram_units(diagram: str) -> tuple[dict[str, set[str]], list[tuple[str, str, str]]]:
    """Each node and subgraph -> the package's units its label names; and every arrow as
    (from, to, the subgraph it is drawn in)."""
    units: dict[str, set[str]] = {}
    members: dict[str, set[str]] = {}
    arrows: list[tuple[str, str, str]] = []
    inside: list[str] = []
    for line in diagram.splitlines():
        if start := re.match(r'\s*subgraph (\w+)\["', line):
            inside.append(start.group(1))
            continue
        if line.strip() == "end":
            inside.pop()
            continue
        for node, label in MERMAID_NODE.findall(line):
            names = label.split(": ")[0] if ": " in label else label
            units[node] = {
                word.removesuffix(".py").removesuffix("/").replace("/", ".")
                for word in names.split()
                if PATH_NAME.match(word)
            }
            for group in inside:
                members.setdefault(group, set()).add(node)
        ends = [MERMAID_NODE.sub(r"\1", part).strip() for part in MERMAID_ARROW.split(line)]
        arrows += [(a, b, inside[-1] if inside else "") for a, b in pairwise(ends)]
    for group, nodes in members.items():
        units[group] = set().union(*(units[node] for node in nodes))
    return units, arrows


def test_the_architecture_diagram_is_the_layout_and_its_arrows_exist() -> None:
    """The chain of stages is tests/test_layout.py's order; every other arrow is an import
    the code makes (a drawn `prepare → pipeline` that no module makes fails here)."""
    from tests import test_layout as layout

    _, diagram = _architecture()
    units, arrows = _diagram_units(diagram)
    known = set(layout.STAGES) | set(layout.TOOLS) | layout.SHARED | layout.EDGES
    assert sorted(u for named in units.values() for u in named if u not in known) == []
    drawn = set().union(*units.values())
    assert sorted(known - drawn - {"", "__main__", "tools"}) == []

    chain = [(units[a], units[b]) for a, b, group in arrows if group == "stages"]
    assert all(len(a) == len(b) == 1 for a, b in chain)  # one stage a box
    stages = layout.STAGES[: layout.STAGES.index("render") + 1]
    assert [(*a, *b) for a, b in chain] == list(pairwise(stages))

    imported: dict[str, set[str]] = {}
    for path in layout.source_files():
        importer = layout.unit_of(layout.module_name(path))
        for _, name in layout.imports(path):
            imported.setdefault(importer, set()).add(layout.unit_of(name))
    missing = [
        f"{a} --> {b}"
        for a, b, group in arrows
        if group != "stages"
        and not any(v in imported.get(u, set()) for u in units[a] for v in units[b])
    ]
    assert missing == []
