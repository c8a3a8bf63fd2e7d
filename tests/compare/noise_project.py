"""A 24-query project whose retriever's rankings the test writes down (scripted_search.py).

Small datasets are where the gate flaps, so the noise tests need exact control over
which query finds what: each query has one relevant note, and ``ranking(i, rank)``
puts query i's note at ``rank`` (None: not in the top 10) behind filler notes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

QUERIES = 24
FILLERS = [f"f{n:02d}" for n in range(1, 11)]
SEARCH_SCRIPT = Path(__file__).with_name("scripted_search.py")

# The seed's rule, whose noise settings these tests pin.
CONFIG = """\
min_fixtures = 3
min_human = 1
gate_rule = "any-metric"
{extra}
[dataset_retrievers]
"keyword.jsonl" = "custom"

[retrievers.custom]
command = [{python}, "search.py"]

[thresholds]
"mrr@10" = false
"ndcg@10" = false
"p@5" = false
"""


def query_text(i: int) -> str:
    return f"question number {i:02d}"


def note(i: int) -> str:
    return f"d{i:02d}"


def ranking(i: int, rank: int | None) -> list[str]:
    """Query i's answer: its note at ``rank`` (1-based) behind fillers, or only fillers."""
    if rank is None:
        return FILLERS[:10]
    return [*FILLERS[: rank - 1], note(i)]


def answers(ranks: dict[int, int | None]) -> str:
    """answers.json for every query: ``ranks[i]`` where given, else rank 1."""
    return json.dumps(
        {query_text(i): ranking(i, ranks.get(i, 1)) for i in range(1, QUERIES + 1)}, indent=1
    )


def dataset(ids: str = "q") -> str:
    return "".join(
        json.dumps(
            {
                "query_id": f"{ids}-{i:02d}",
                "query": query_text(i),
                "retrieval_type": "keyword",
                "expected_top_k_ids": [note(i)],
                "ground_truth_source": "human-annotated",
            }
        )
        + "\n"
        for i in range(1, QUERIES + 1)
    )


def config(extra: str = "") -> str:
    return CONFIG.format(extra=extra, python=json.dumps(sys.executable))


def project_files(ranks: dict[int, int | None], *, extra: str = "") -> dict[str, str]:
    files = {
        f"datasets/corpus/{note(i)}.md": f"# Note {i}\n\nAbout topic {i}.\n"
        for i in range(1, QUERIES + 1)
    }
    files.update({f"datasets/corpus/{f}.md": f"# Filler {f}\n\nNothing much.\n" for f in FILLERS})
    files["datasets/keyword.jsonl"] = dataset()
    files["retrieval-eval.toml"] = config(extra)
    files["answers.json"] = answers(ranks)
    files["search.py"] = SEARCH_SCRIPT.read_text(encoding="utf-8")
    files[".gitignore"] = "retrieval-eval-report/\n.retrieval-eval-cache/\nsearches.log\n"
    return files
