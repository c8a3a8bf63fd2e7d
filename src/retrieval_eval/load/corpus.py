"""Pick the corpus reader from what the path is, so users pass one ``--corpus PATH`` for any format.

- a folder holding ``corpus.jsonl``      → BEIR corpus (``corpus.jsonl.gz`` too)
- a ``*.jsonl`` file                      → our JSONL documents (``*.jsonl.gz`` too)
- a ``*.sqlite``/``*.db``/``*.bearnote`` file, or any file that is a SQLite database → Bear notes
- any other folder                        → Markdown notes
"""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.errors import InputError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.input_files import check_inside, open_input

_SQLITE_SUFFIXES = {".sqlite", ".sqlite3", ".db", ".bearnote"}
_SQLITE_MAGIC = b"SQLite format 3\x00"


def load_corpus(path: Path) -> Corpus:
    if not path.exists():
        raise InputError("corpus path does not exist", file=path)
    check_inside(path)
    if path.is_dir():
        from retrieval_eval.load.beir import beir_file, load_beir_corpus

        if beir_file(path, "corpus.jsonl") is not None:
            return load_beir_corpus(path)
        from retrieval_eval.load.markdown_notes import load_markdown_notes

        return load_markdown_notes(path)
    if path.name.lower().endswith((".jsonl", ".jsonl.gz")):
        from retrieval_eval.load.jsonl_corpus import load_jsonl_corpus

        return load_jsonl_corpus(path)
    if path.suffix.lower() in _SQLITE_SUFFIXES or _is_sqlite(path):
        from retrieval_eval.load.bear import load_bear_database

        return load_bear_database(path)
    raise InputError(
        "unsupported corpus: expected a .jsonl file, a BEIR folder, a folder of Markdown notes "
        "or a Bear SQLite database",
        file=path,
    )


def _is_sqlite(path: Path) -> bool:
    with open_input(path) as handle:
        return handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
