"""A command retriever that can take many queries per request (docs/retrievers.md).

``answers.json`` (in the directory it runs in) maps each query text to the document ids
it returns, best first. ``batch.json``, when present, is what its `index` answer says
under ``batch`` (true, false, a number, or anything else a test wants refused). Each
request is appended to ``requests.log`` as ``OP COUNT`` (COUNT: queries it carried).
With ``fail.json`` (``{"at": N}``) its answer to the N-th query of a `search_many`
is an error. ``form.json`` says how it answers: ``{"columns": true}`` gives hits as
``ids``/``scores`` columns instead of hit objects, ``{"one_line": true}`` sends all of a
`search_many`'s answers in one ``{"answers": [...]}`` line, and ``{"bad_score_at": N}``
makes the N-th query's first score the text ``"high"``; ``{"filler": N}`` adds N hits
of documents that do not exist, scored below every real one, to each answer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FORM_FILE = Path("form.json")
FORM: dict[str, Any] = (
    json.loads(FORM_FILE.read_text(encoding="utf-8")) if FORM_FILE.exists() else {}
)
ASKED = [0]  # queries answered so far


def _hits(answers: dict[str, list[str]], query: str, k: int) -> dict[str, Any]:
    ids = answers.get(query, [])[:k]
    scores: list[Any] = [1.0 / (i + 1) for i in range(len(ids))]
    ASKED[0] += 1
    if ASKED[0] == FORM.get("bad_score_at") and scores:
        scores[0] = "high"
    filler = FORM.get("filler", 0)
    ids = ids + [f"filler/{n}" for n in range(filler)]
    scores = scores + [-1.0 - n / filler for n in range(filler)]
    if FORM.get("columns"):
        return {"ids": ids, "scores": scores}
    return {"hits": [{"id": doc, "score": score} for doc, score in zip(ids, scores, strict=True)]}


def main() -> int:
    answers: dict[str, list[str]] = json.loads(Path("answers.json").read_text(encoding="utf-8"))
    batch_file, fail_file = Path("batch.json"), Path("fail.json")
    batch = json.loads(batch_file.read_text(encoding="utf-8")) if batch_file.exists() else None
    fail = json.loads(fail_file.read_text(encoding="utf-8")) if fail_file.exists() else None
    with Path("requests.log").open("a", encoding="utf-8") as log:
        for line in sys.stdin:
            request = json.loads(line)
            replies: list[dict[str, Any]]
            if request["op"] == "index":
                log.write("index 0\n")
                replies = [{"ok": True, **({"batch": batch} if batch is not None else {})}]
            elif request["op"] == "search_many":
                queries = request["queries"]
                log.write(f"search_many {len(queries)}\n")
                replies = [_hits(answers, q["query"], q["k"]) for q in queries]
                if fail is not None and len(replies) >= fail["at"]:
                    replies[fail["at"] - 1] = {"error": "shard 3 is down"}
            else:
                log.write("search 1\n")
                replies = [_hits(answers, request["query"], request["k"])]
            log.flush()
            if request["op"] == "search_many" and FORM.get("one_line"):
                replies = [{"answers": replies}]
            sys.stdout.write("".join(json.dumps(reply) + "\n" for reply in replies))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
