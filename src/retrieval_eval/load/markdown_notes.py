"""Read a folder of Markdown notes (an Obsidian vault, a Bear export, a docs folder).

Conventions, chosen so ids stay stable when a note is edited:
- id: the path relative to the folder, without ``.md`` (or ``.markdown``, in any case),
  with ``/`` separators
  (``recipes/shakshuka``); hidden folders such as ``.git`` or ``.obsidian`` are skipped;
- title: front matter ``title:``, else the first ``# `` heading, else the file name;
- tags: front matter ``tags:`` (a list, or one comma/space separated string) plus
  inline Bear-style ``#tag`` and ``#nested/tag`` (written after whitespace or at a
  line start, outside code), each without the ``#``, as written (no parent expansion);
- text: the note without its front matter, headings kept so the chunker can split on them;
- other front-matter keys become metadata.
A note whose body is blank is skipped and counted in ``Corpus.skipped_empty``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from retrieval_eval.errors import InputError
from retrieval_eval.load.corpus_builder import CorpusBuilder
from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.load.input_files import read_input_bytes, wide_encoding_problem

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+).*?\1")
# A one-word tag (#tag, #nested/tag) or Bear's multi-word form closed by a hash (#two words#).
_INLINE_TAG = re.compile(r"(?<!\S)#(?![\s#])([^\s#]+(?: [^\s#]+)+#(?!\S)|[^\s#]+)")
_TRAILING_PUNCTUATION = ".,;:!?)]}\"'"
_H1 = re.compile(r"^ {0,3}# +(.+?)(?: +#+)? *$")
# Lists and mappings inside one another in a note's front matter. Reading the values and
# writing them out recurse once per level, so thousands of levels (a few kilobytes of
# `[[[[`) would end in a RecursionError, after seconds of work; real metadata has two or three.
MAX_FRONT_MATTER_DEPTH = 50


def load_markdown_notes(folder: Path) -> Corpus:
    builder = CorpusBuilder(folder)
    for path in _note_paths(folder):
        note_id = path.relative_to(folder).with_suffix("").as_posix()
        document = _read_note(path, note_id)
        builder.add(document, file=path, empty=not document.text.strip())
    corpus = builder.build()
    if not corpus.documents and not corpus.skipped_empty:
        raise InputError(
            "no Markdown notes (*.md, *.markdown) in this folder; a corpus is a folder of notes, "
            "a .jsonl file, a BEIR folder or a Bear database",
            file=folder,
        )
    return corpus


# What editors and exporters name Markdown files, in any case (`Note.MD` from Windows tools).
NOTE_SUFFIXES = (".md", ".markdown")


def is_note_name(name: str) -> bool:
    return name.lower().endswith(NOTE_SUFFIXES) and not name.startswith(".")


def count_notes(folder: Path) -> int:
    """How many notes `load_markdown_notes` reads in ``folder`` (blank ones included): the
    one count `init` and a run's corpus agree on."""
    return sum(1 for _ in _note_paths(folder))


def _note_paths(folder: Path) -> Iterator[Path]:
    for root, directories, files in os.walk(folder):
        directories[:] = sorted(d for d in directories if not d.startswith("."))
        for name in sorted(files):
            if is_note_name(name):
                yield Path(root) / name


def _read_note(path: Path, note_id: str) -> Document:
    content = _read_utf8(path).replace("\r\n", "\n").replace("\r", "\n")
    front_matter, body = _split_front_matter(content, path)
    title = front_matter.pop("title", None)
    if not isinstance(title, str) or not title.strip():
        title = _first_h1(body) or path.stem
    tags = _front_matter_tags(front_matter.pop("tags", None), path) + _inline_tags(body)
    return Document(
        id=note_id,
        title=title.strip(),
        text=body.strip("\n"),
        tags=tuple(dict.fromkeys(tags)),
        metadata=_json_safe(front_matter, path),
        source=str(path),
    )


def _read_utf8(path: Path) -> str:
    data = read_input_bytes(path)
    if (problem := wide_encoding_problem(data[:4])) is not None:
        raise InputError(problem, file=path, line=1)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError("invalid UTF-8; save the note as UTF-8", file=path, line=line) from None


def _split_front_matter(content: str, path: Path) -> tuple[dict[str, Any], str]:
    lines = content.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}, content
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            break
    else:
        raise InputError("front matter opened with --- is never closed", file=path, line=1)
    text = "\n".join(lines[1:index])
    try:
        _check_events(text, path)
        parsed = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(error, "problem", None) or str(error)
        raise InputError(
            f"front matter is not valid YAML: {problem}", file=path, line=line
        ) from None
    if parsed is None:
        parsed = {}
    if not isinstance(parsed, dict):
        raise InputError("front matter must be a YAML mapping (key: value)", file=path, line=2)
    return {str(key): value for key, value in parsed.items()}, "\n".join(lines[index + 1 :])


def _check_events(text: str, path: Path) -> None:
    """Refuse aliases and deep nesting from the parser's events, before anything recurses.

    A YAML alias (``*name``) repeats a value without repeating its text, so a few lines of
    nested aliases ("billion laughs") expand to more than memory holds once the metadata is
    written out; and one inside its own anchor never ends. A note's front matter needs none.
    The event stream itself is produced without recursion, so counting the depth there is
    safe however deep the text goes (``MAX_FRONT_MATTER_DEPTH``)."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        mark = event.start_mark
        line = (mark.line if mark is not None else 0) + 2  # front matter starts on line 2
        if isinstance(event, yaml.AliasEvent):
            raise InputError(
                f"front matter uses a YAML alias (*{event.anchor}); write the value out instead",
                file=path,
                line=line,
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_FRONT_MATTER_DEPTH:
                raise InputError(
                    f"front matter is nested more than {MAX_FRONT_MATTER_DEPTH} levels deep "
                    "(lists and mappings inside one another); flatten it",
                    file=path,
                    line=line,
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _front_matter_tags(value: Any, path: Path) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        items: list[Any] = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        items = value
    else:
        raise InputError("front matter 'tags' must be a list or a string", file=path)
    tags = []
    for item in items:
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            raise InputError(f"front matter tag {item!r} is not a string", file=path)
        tag = str(item).strip().lstrip("#").strip()
        if tag:
            tags.append(tag)
    return tags


def _inline_tags(body: str) -> list[str]:
    tags = []
    for line in _prose_lines(body):
        for match in _INLINE_TAG.finditer(_INLINE_CODE.sub(" ", line)):
            raw = match.group(1)
            tag = raw[:-1].strip() if raw.endswith("#") else raw.rstrip(_TRAILING_PUNCTUATION)
            tag = tag.strip("/")
            # "#42" is an issue or list number, not a tag (Bear agrees).
            if tag and not tag.isdigit():
                tags.append(tag)
    return tags


def _first_h1(body: str) -> str | None:
    for line in _prose_lines(body):
        match = _H1.match(line)
        if match:
            return match.group(1).strip()
    return None


def _prose_lines(body: str) -> Iterator[str]:
    """Lines outside fenced code blocks, where ``#include`` or ``# comment`` mean nothing."""
    fence: str | None = None
    for line in body.split("\n"):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
                continue
            yield line
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
            fence = None


def _json_safe(values: dict[str, Any], path: Path) -> dict[str, Any]:
    # YAML gives dates and other types later stages (JSON reports, chromadb metadata) cannot store.
    # No value contains itself: _refuse_aliases has refused every alias.
    text = json.dumps(values, default=str, ensure_ascii=False)
    safe: dict[str, Any] = json.loads(text)
    return safe
