"""The child a Python factory runs in, spoken to over its JSON-lines pipe exactly as the
parent speaks to it (the command custom.py starts): the factory imported from the project
root and called with its options, the corpus indexed, answers in columns, a failure in the
user's code one line naming the call, and whatever the user's code prints kept out of the
pipe."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from retrieval_eval.retrieval.external.custom import HOST_COMMAND

PROJECT = """\
import math
from retrieval_eval.retrieval.base import Hit, SearchResult


class Titles:
    name = "titles"

    def __init__(self, boost, mode="ok"):
        self.boost, self.mode, self.titles = boost, mode, {}

    def index(self, corpus):
        print("indexing", len(corpus.documents))  # user output: must not reach the pipe
        self.titles = {doc.id: doc.title.lower() for doc in corpus.documents}

    def search(self, query, k, tags=()):
        if self.mode == "raise":
            raise KeyError("shard 3")
        if self.mode == "exit":
            raise SystemExit(3)
        if self.mode == "nan":
            return SearchResult(hits=(Hit("a", math.nan, ""),))
        words = query.lower().split()
        hits = [
            Hit(doc, self.boost * sum(w in title for w in words), "")
            for doc, title in sorted(self.titles.items())
            if any(w in title for w in words)
        ]
        return SearchResult(hits=tuple(hits[:k]), cost_usd=0.25)

    def describe(self):
        return {"boost": self.boost}


def make(boost=1.0, mode="ok"):
    return Titles(boost, mode)


def not_one():
    return object()
"""

DOCUMENTS = [
    {"id": "lisbon", "title": "Trip to Lisbon", "text": "", "tags": [], "metadata": {}},
    {"id": "kyoto", "title": "Kyoto trip", "text": "", "tags": [], "metadata": {}},
]


def converse(project: Path, *requests: dict[str, Any]) -> list[dict[str, Any]]:
    (project / "team_search.py").write_text(PROJECT, encoding="utf-8")
    lines = "".join(json.dumps(request) + "\n" for request in requests)
    done = subprocess.run(
        list(HOST_COMMAND),
        input=lines,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd="/",
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def started(project: Path, spec: str, **options: object) -> list[dict[str, Any]]:
    return [
        {"op": "import", "spec": spec, "root": str(project)},
        {"op": "factory", "options": options, "kind": "retriever"},
    ]


def test_a_factory_from_the_project_answers_in_columns(tmp_path: Path) -> None:
    answers = converse(
        tmp_path,
        *started(tmp_path, "team_search:make", boost=2.0),
        {"op": "index", "documents": DOCUMENTS},
        {"op": "search", "query": "lisbon trip", "k": 5, "tags": []},
        {"op": "describe"},
        {"op": "close"},
    )
    assert answers == [
        {"ok": True},
        {"ok": True, "name": "titles"},
        {"ok": True, "describe": {"boost": 2.0}},
        {"ids": ["kyoto", "lisbon"], "scores": [2.0, 4.0], "cost_usd": 0.25},
        {"describe": {"boost": 2.0}},
        {"ok": True},
    ]


def test_a_failure_in_the_user_s_code_is_one_line_naming_the_call(tmp_path: Path) -> None:
    search = {"op": "search", "query": "trip", "k": 5, "tags": []}
    index = {"op": "index", "documents": DOCUMENTS}
    assert converse(tmp_path, *started(tmp_path, "team_search:make", mode="raise"), index, search)[
        -1
    ] == {"error": "search() raised KeyError: 'shard 3'"}
    exited = converse(tmp_path, *started(tmp_path, "team_search:make", mode="exit"), index, search)
    assert exited[-1]["error"].startswith("search() called sys.exit(3); a retriever must raise")
    # NaN has no JSON spelling: sent as text, which the parent's checks refuse.
    nan = converse(tmp_path, *started(tmp_path, "team_search:make", mode="nan"), index, search)
    assert nan[-1] == {"ids": ["a"], "scores": ["nan"], "cost_usd": 0.0}


def test_a_factory_that_cannot_be_used_is_a_configuration_error(tmp_path: Path) -> None:
    missing = converse(tmp_path, {"op": "import", "spec": "no_such_module:make", "root": None})
    assert missing[0]["config"] is True
    assert missing[0]["error"].startswith("cannot import no_such_module (")
    wrong = converse(tmp_path, *started(tmp_path, "team_search:not_one"))
    assert wrong[1] == {
        "error": "the factory returned object, which lacks the Retriever protocol (name, "
        "index(corpus), search(query, k, tags), describe())",
        "config": True,
    }
    early = converse(tmp_path, {"op": "search", "query": "q", "k": 1, "tags": []})
    assert early == [{"error": "`search` before the factory was called"}]
