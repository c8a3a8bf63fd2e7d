"""Every command that runs a retriever or reads the configured corpus prepares its run the
one way (``retrieval_eval.prepare``): `secret_env` withheld from the retriever, and a note
linked outside the repository refused, whichever command the user types.

Each command is started through the console script in a scratch project whose
configuration names MY_SECRET in `secret_env` and whose `custom` retriever (a command)
records the environment it was given.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.action.project import CONFIG, new_project
from tests.support.action import CONSOLE_SCRIPT

pytestmark = pytest.mark.slow

SECRET = "my-secret-value-0123456789"

# The commands that run a retriever or read the configured corpus, each with the arguments
# that make it do so here; every other command reads only the files named on its command
# line (validate, import beir, trec, cache) or nothing of the run (model, init's check of the
# configuration, schema's models, action's own tests under tests/security/).
PREPARED = {
    "run": ["run", "--quiet"],
    "baseline": ["baseline", "update"],
    "embed": ["embed"],
    "beir": ["beir", "beir-folder", "--retriever", "custom", "--config", "retrieval-eval.toml"],
    "tune": ["tune", "datasets/keyword.jsonl", "--param", "alpha=0.3,0.7", "--folds", "2"],
    "review": ["review", "datasets/keyword.jsonl", "--retriever", "custom"],
    "generate": ["generate", "--per-file", "3", "--force"],
    "merge": ["merge", "no-partials"],
    "compare": ["compare", "--retriever", "custom", "--retriever", "bm25"],
    # `import beir` reads only its folder; `import queries` searches with the retriever.
    "import": ["import", "queries", "log.jsonl", "--retriever", "custom", "--out", "c.jsonl"],
}
UNPREPARED = {"validate", "trec", "model", "cache", "init", "action", "schema"}
# A command retriever that records its environment, then serves nothing.
DUMP_ENV = """\
import json, os, sys
with open(sys.argv[1], "w") as handle:
    json.dump(sorted(os.environ), handle)
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"hits": []} if request.get("op") == "search" else {"ok": True}), flush=True)
"""


def test_every_command_is_classified() -> None:
    """A new command must say whether it runs a retriever or reads the configured corpus."""
    listing = subprocess.run(
        [CONSOLE_SCRIPT, "--help"], capture_output=True, text=True, check=True
    ).stdout
    section = listing.split("Commands:", 1)[1]
    commands = {line.split()[0] for line in section.splitlines() if line.startswith("  ")}
    assert set(PREPARED) | UNPREPARED == commands
    assert not set(PREPARED) & UNPREPARED


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "project"
    new_project(root)
    dump = tmp_path / "env.json"
    (root / "dump_env.py").write_text(DUMP_ENV)
    (root / "retrieval-eval.toml").write_text(
        'secret_env = ["MY_SECRET"]\n'
        + CONFIG
        + '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        + f'command = [{json.dumps(sys.executable)}, "dump_env.py", {json.dumps(str(dump))}]\n'
    )
    beir = root / "beir-folder"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        json.dumps({"_id": "d1", "title": "Eggs", "text": "eggs in tomato sauce"}) + "\n"
    )
    (beir / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "eggs"}) + "\n")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (root / "log.jsonl").write_text(json.dumps({"query": "eggs"}) + "\n")
    keyword = root / "datasets" / "keyword.jsonl"
    lines = keyword.read_text().splitlines()
    first = json.loads(lines[0]) | {"ground_truth_source": "synthetic"}
    keyword.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    return root, dump


def _run(root: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
    env.update(MY_SECRET=SECRET, NO_COLOR="1")
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run(
        [CONSOLE_SCRIPT, *args],
        cwd=root,
        env=env,
        input="x\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("command", ["run", "baseline", "beir", "review", "compare", "import"])
def test_the_retriever_never_sees_secret_env(tmp_path: Path, command: str) -> None:
    root, dump = _project(tmp_path)
    done = _run(root, PREPARED[command])
    assert dump.exists(), (done.returncode, done.stderr)
    seen = json.loads(dump.read_text())
    assert "MY_SECRET" not in seen, done.stderr
    assert SECRET not in done.stdout + done.stderr
    for written in root.rglob("*.json"):
        assert SECRET not in written.read_text(errors="replace"), written


@pytest.mark.parametrize(
    "command", ["run", "baseline", "embed", "tune", "review", "generate", "compare", "import"]
)
def test_a_note_linked_outside_the_repository_is_refused(tmp_path: Path, command: str) -> None:
    root, _ = _project(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.md").write_text("# Private\n\nNot part of the repository.\n")
    (root / "datasets" / "corpus" / "private.md").symlink_to(outside / "private.md")

    done = _run(root, PREPARED[command])

    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "private.md" in done.stderr and "outside" in done.stderr, done.stderr
    assert "Not part of the repository" not in done.stdout + done.stderr
