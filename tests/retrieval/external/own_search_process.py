"""A user's own search system speaking the JSON-lines protocol (docs/retrievers.md).

Ranks documents by how many query words occur in them. Flags make it misbehave
in the ways the tests check: --bad-json, --no-hits, --crash-on-search, --error,
--silent; --cost USD adds a cost to each answer; --pid-file PATH records its pid.
"""

from __future__ import annotations

import json
import os
import sys


def main(flags: list[str]) -> int:
    documents: list[dict[str, object]] = []
    cost = float(flags[flags.index("--cost") + 1]) if "--cost" in flags else 0.0
    if "--pid-file" in flags:
        with open(flags[flags.index("--pid-file") + 1], "w") as handle:
            handle.write(str(os.getpid()))
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "index":
            documents = request["documents"]
            answer: dict[str, object] = {"ok": True, "describe": {"ranking": "word overlap"}}
        elif "--crash-on-search" in flags:
            print("boom: index file is corrupt", file=sys.stderr, flush=True)
            return 3
        elif "--silent" in flags:
            continue
        elif "--bad-json" in flags:
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            continue
        elif "--error" in flags:
            answer = {"error": "quota exceeded"}
        elif "--no-hits" in flags:
            answer = {"results": []}
        else:
            words = request["query"].lower().split()
            wanted = set(request["tags"])
            hits = []
            for doc in documents:
                if wanted and not wanted & set(doc["tags"]):  # type: ignore[arg-type]
                    continue
                text = f"{doc['title']} {doc['text']}".lower()
                score = sum(word in text for word in words)
                if score:
                    hits.append({"id": doc["id"], "score": score, "text": doc["text"]})
            answer = {"hits": hits[: request["k"]], "cost_usd": cost}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
