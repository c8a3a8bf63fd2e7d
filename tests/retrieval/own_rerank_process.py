"""A user's reranker as a command speaking JSON lines: ranks candidates by id, descending.

With ``--invent`` it ranks a document that was not a candidate (a bug the
evaluation must catch).
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    invent = "--invent" in sys.argv
    for line in sys.stdin:
        request = json.loads(line)
        ids = sorted((c["id"] for c in request["candidates"]), reverse=True)
        if invent:
            ids.append("not-a-candidate")
        hits = [{"id": doc_id, "score": len(ids) - i} for i, doc_id in enumerate(ids)]
        print(json.dumps({"hits": hits, "cost_usd": 0.0002}), flush=True)


if __name__ == "__main__":
    main()
