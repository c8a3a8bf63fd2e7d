"""A tiny but valid retrieval-eval project in a real git repository, for runner-contract tests.

Six keyword fixtures over eight Markdown notes, scored with BM25 so a run takes
a moment. The config lowers the fixture minimums (the default is 20 per file)
and drops the absolute quality thresholds, so verdicts depend only on the
baseline comparison these tests exercise.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.action.git_repo import commit_all, init_repo, write

NOTES = {
    "recipes/shakshuka": "# Shakshuka\n\nEggs poached in a spiced tomato sauce with cumin.\n",
    "recipes/risotto": "# Mushroom risotto\n\nArborio rice stirred with stock and parmesan.\n",
    "travel/lisbon": "# Lisbon\n\nTrams up the hills, pastel de nata, a hostel in Alfama.\n",
    "travel/kyoto": "# Kyoto\n\nTemples, the bamboo forest in Arashiyama, a night in a ryokan.\n",
    "books/deep-work": "# Deep Work\n\nCal Newport on focus without distraction.\n",
    "software/deploy": "# Deploy checklist\n\nRun migrations, ship the release, roll back.\n",
    "software/api-design": "# API design\n\nVersioning, pagination and idempotent requests.\n",
    "journal/2024-03-01": "# A long walk\n\nThought about a career change on a long walk.\n",
}

FIXTURES = [
    ("k-001", "eggs poached in tomato sauce", "recipes/shakshuka"),
    ("k-002", "arborio rice with parmesan", "recipes/risotto"),
    ("k-003", "trams and pastel de nata", "travel/lisbon"),
    ("k-004", "bamboo forest and ryokan", "travel/kyoto"),
    ("k-005", "run migrations and roll back the release", "software/deploy"),
    ("k-006", "pagination and idempotent requests", "software/api-design"),
]

# The seed's rule (any gated metric drops more than the tolerance), whose MRR@10 headlines
# these runner-contract tests pin; tests of the default rule write their own.
CONFIG = """\
gate_rule = "any-metric"
min_fixtures = 3
min_human = 1

[thresholds]
"mrr@10" = false
"ndcg@10" = false
"p@5" = false
"""

# Rewrites that make k-005 and k-006 lose their answers: a clear regression.
REGRESSING_NOTES = {
    "datasets/corpus/software/deploy.md": "# Deploy checklist\n\nThings to do before lunch.\n",
    "datasets/corpus/software/api-design.md": "# API design\n\nSome thoughts on interfaces.\n",
}


# Paraphrases with few shared words: what the dense retriever is for.
SEMANTIC_FIXTURES = [
    ("s-001", "a breakfast dish of eggs cooked in tomatoes", "recipes/shakshuka"),
    ("s-002", "creamy Italian rice dinner", "recipes/risotto"),
    ("s-003", "holiday in Japan with old shrines", "travel/kyoto"),
    ("s-004", "concentrating on hard problems for hours", "books/deep-work"),
]


def fixture_lines(
    fixtures: list[tuple[str, str, str]] = FIXTURES, retrieval_type: str = "keyword"
) -> str:
    return "".join(
        json.dumps(
            {
                "query_id": query_id,
                "query": query,
                "retrieval_type": retrieval_type,
                "expected_top_k_ids": [doc],
                "ground_truth_source": "human-annotated",
            }
        )
        + "\n"
        for query_id, query, doc in fixtures
    )


def project_files() -> dict[str, str]:
    files = {f"datasets/corpus/{doc}.md": text for doc, text in NOTES.items()}
    files["datasets/keyword.jsonl"] = fixture_lines()
    files["retrieval-eval.toml"] = CONFIG
    files["README.md"] = "# notes search\n"
    files[".gitignore"] = "retrieval-eval-report/\n.retrieval-eval-cache/\n"
    return files


def new_project(repo: Path) -> str:
    """Initialise the repository with the project as its first commit; return its sha."""
    init_repo(repo)
    write(repo, project_files())
    return commit_all(repo, "notes search with golden datasets")


# The same project under the default rule (headline-pooled).
DEFAULT_RULE_CONFIG = CONFIG.replace('gate_rule = "any-metric"\n', "")
