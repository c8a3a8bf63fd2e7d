"""A search system speaking the JSON-lines protocol whose rankings a test writes down.

``answers.json`` (in the directory it runs in) maps each query text to the document ids
it returns, best first. With ``flaky.json`` (``{"seed": S, "swap": P}``) it is
deliberately not deterministic, as an approximate index is: on each search, with
probability P, it swaps its first two results, drawn from a random generator seeded
with S, so the same seed gives the same sequence of answers. Each search is
appended to ``searches.log``, one query per line.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path


def main() -> int:
    answers: dict[str, list[str]] = json.loads(Path("answers.json").read_text(encoding="utf-8"))
    flaky_file = Path("flaky.json")
    flaky = json.loads(flaky_file.read_text(encoding="utf-8")) if flaky_file.exists() else None
    rng = random.Random(flaky["seed"] if flaky else 0)
    with Path("searches.log").open("a", encoding="utf-8") as log:
        for line in sys.stdin:
            request = json.loads(line)
            if request["op"] == "index":
                answer: dict[str, object] = {"ok": True}
            else:
                ids = list(answers.get(request["query"], []))
                if flaky and len(ids) > 1 and rng.random() < flaky["swap"]:
                    ids[0], ids[1] = ids[1], ids[0]
                log.write(request["query"] + "\n")
                log.flush()
                hits = [{"id": doc, "score": 1.0 / (i + 1)} for i, doc in enumerate(ids)]
                answer = {"hits": hits[: request["k"]]}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
