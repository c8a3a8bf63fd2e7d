#!/usr/bin/env python3
"""A minimal search service speaking retrieval-eval's JSON-lines protocol.

retrieval-eval starts it once (`command = ["python3", "examples/python/search.py"]`
under `[retrievers.custom]`) and writes one JSON request per line on its stdin:

    {"op": "index", "documents": [{"id", "title", "text", "tags", "metadata"}, ...]}
    {"op": "search", "query": "...", "k": 10, "tags": ["travel"]}
    {"op": "search_many", "queries": [{"query", "k", "tags"}, ...]}

It answers each with one JSON line on stdout; logs go to stderr. Its `index` answer
says `"batch": true`, so the queries come as `search_many` requests, answered all in one
line with each query's hits as columns (`ids`, `scores`, `texts`), the cheapest form to
send and to check; `search`, answered with hit objects, is the form without batches.
Replace `rank` with a call to your own system. Standard library only.
"""

from __future__ import annotations

import json
import re
import sys

WORD = re.compile(r"\w+")
STOP_WORDS = frozenset("a an and are as at be by for in is of on or the to with".split())


def words(text: str) -> set[str]:
    return {word for word in WORD.findall(text.lower()) if word not in STOP_WORDS}


def rank(documents: list[dict], query: str, k: int, tags: list[str]) -> list[dict]:
    """Documents sharing the most words with the query; only those carrying ANY of
    `tags` when tags are given (none carry them: no result, never an unfiltered one)."""
    wanted = set(tags)
    query_words = words(query)
    hits = []
    for doc in documents:
        if wanted and not wanted.intersection(doc["tags"]):
            continue
        score = len(query_words & doc["words"])
        if score:
            hits.append({"id": doc["id"], "score": score, "text": doc["text"][:500]})
    hits.sort(key=lambda hit: (-hit["score"], hit["id"]))
    return hits[:k]


def main() -> int:
    documents: list[dict] = []
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "index":
            documents = [
                {**doc, "words": words(f"{doc['title']} {doc['text']}")}
                for doc in request["documents"]
            ]
            print(f"indexed {len(documents)} documents", file=sys.stderr)
            describe = {"ranking": "shared words", "language": "python"}
            answer: dict = {"ok": True, "describe": describe, "batch": True}
        elif request["op"] == "search":
            answer = {"hits": rank(documents, request["query"], request["k"], request["tags"])}
        elif request["op"] == "search_many":
            answers = []
            for query in request["queries"]:
                hits = rank(documents, query["query"], query["k"], query["tags"])
                answers.append(
                    {
                        "ids": [hit["id"] for hit in hits],
                        "scores": [hit["score"] for hit in hits],
                        "texts": [hit["text"] for hit in hits],
                    }
                )
            answer = {"answers": answers}
        else:
            answer = {"error": f"unknown op {request['op']!r}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
