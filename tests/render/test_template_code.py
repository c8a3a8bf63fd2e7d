"""The report templates' compiled code, kept between runs: the same text, whatever the entry."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import DictLoader, StrictUndefined, pass_context
from jinja2.sandbox import SandboxedEnvironment

from retrieval_eval.render.markdown import template_environment
from retrieval_eval.render.report_html import html_environment
from retrieval_eval.render.template_code import CODE_FOLDER, SUFFIX, TemplateCode, keep_compiled

TEMPLATES = {
    "page.md.j2": "{% for x in items %}\n- {{ x | shout }}\n{% endfor %}\n{{ 'k' | shout }}"
}


def _environment(folder: Path, *, trim: bool = True, shout: str = "!") -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        loader=DictLoader(TEMPLATES), undefined=StrictUndefined, trim_blocks=trim
    )
    env.filters["shout"] = lambda value: f"{value}{shout}"
    return keep_compiled(env, folder)


def _render(env: SandboxedEnvironment) -> str:
    return env.get_template("page.md.j2").render(items=["a", "b"])


def test_the_second_environment_runs_the_code_the_first_compiled(tmp_path: Path) -> None:
    first = _render(_environment(tmp_path))
    entries = list(tmp_path.glob(f"*{SUFFIX}"))
    assert len(entries) == 1
    stamp = entries[0].stat().st_mtime_ns
    assert _render(_environment(tmp_path)) == first == "- a!\n- b!\nk!"
    assert entries[0].stat().st_mtime_ns == stamp  # read, not written again


def test_a_changed_filter_counts_though_the_template_did_not_change(tmp_path: Path) -> None:
    # Our filters are never computed while compiling: `'k' | shout` is not in the code.
    _render(_environment(tmp_path))
    assert _render(_environment(tmp_path, shout="?")) == "- a?\n- b?\nk?"


def test_an_environment_that_compiles_otherwise_has_an_entry_of_its_own(tmp_path: Path) -> None:
    trimmed = _render(_environment(tmp_path))
    untrimmed = _render(_environment(tmp_path, trim=False))
    assert untrimmed != trimmed
    assert len(list(tmp_path.glob(f"*{SUFFIX}"))) == 2
    assert _render(_environment(tmp_path, trim=False)) == untrimmed


@pytest.mark.parametrize("damage", [b"", b"not jinja's", b"\x00" * 64])
def test_a_damaged_entry_is_compiled_again(tmp_path: Path, damage: bytes) -> None:
    expected = _render(_environment(tmp_path))
    (entry,) = tmp_path.glob(f"*{SUFFIX}")
    entry.write_bytes(damage)
    assert _render(_environment(tmp_path)) == expected
    assert entry.read_bytes() != damage  # replaced by the fresh code


def test_a_folder_that_is_a_file_only_costs_the_compiling(tmp_path: Path) -> None:
    blocked = tmp_path / "code"
    blocked.write_text("a file where the folder would be", encoding="utf-8")
    assert _render(_environment(blocked)) == "- a!\n- b!\nk!"


def test_a_filter_jinja2_passes_more_than_its_arguments_is_refused(tmp_path: Path) -> None:
    env = SandboxedEnvironment(loader=DictLoader(TEMPLATES))
    env.filters["shout"] = pass_context(lambda context, value: value)
    with pytest.raises(ValueError, match="pass-through"):
        keep_compiled(env, tmp_path)


def test_the_reports_keep_their_code_beside_the_package_templates() -> None:
    for env in (template_environment(), html_environment()):
        cache = env.bytecode_cache
        assert isinstance(cache, TemplateCode)
        assert cache.folder == CODE_FOLDER
