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
# configuration, schema's models, action's own tests under tests/security/), or reads the
# configured corpus within the configured input roots and starts no retriever (corpus ids).
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
    # `label` pools the judged tier's queries with the retriever (which finds nothing here).
    "label": ["label", "--pool-depth", "2"],
}
UNPREPARED = {"validate", "trec", "model", "cache", "init", "action", "schema", "corpus"}
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
        + '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n"queries.jsonl" = "custom"\n'
        + "\n[retrievers.custom]\n"
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
    (root / "datasets" / "judged").mkdir()
    (root / "datasets" / "judged" / "queries.jsonl").write_text(
        json.dumps({"query_id": "j1", "query": "eggs"}) + "\n"
    )
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


@pytest.mark.parametrize(
    "command", ["run", "baseline", "beir", "review", "compare", "import", "label"]
)
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
    "command",
    ["run", "baseline", "embed", "tune", "review", "generate", "compare", "import", "label"],
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


# Where a pull request's engine settings are read from, in a process of its own (preparing
# withholds secrets from the process environment).
ENGINE_TRUST = """\
import json, sys
from pathlib import Path
from retrieval_eval.prepare import BaseCommit, prepare
from retrieval_eval.settings import read_settings

base_dir, pr_dir = Path(sys.argv[1]), Path(sys.argv[2])
base = BaseCommit(
    settings=read_settings(
        workdir=pr_dir, config_file=base_dir / "retrieval-eval.toml", overrides={}
    ),
    origin="base",
    configured=True,
)
prepared = prepare(workdir=pr_dir, config_file=None, overrides={}, base=base)
tables = {
    name: getattr(prepared.settings.retrievers, name).model_dump(mode="json")
    for name in ("qdrant", "milvus")
}
print(json.dumps({"tables": tables, "proposed": [list(p) for p in prepared.proposed]}))
"""


def test_a_pull_request_cannot_send_an_engine_s_secret_to_its_own_server(
    tmp_path: Path,
) -> None:
    """Where an engine is reached, which secret goes there and the time bound are the base
    commit's; the collection and its keys are the pull request's (the system under test).
    An engine the base commit has no table for runs with the defaults: embedded, no key."""
    (tmp_path / "base").mkdir()
    (tmp_path / "pr").mkdir()
    (tmp_path / "base" / "retrieval-eval.toml").write_text(
        '[retrievers.qdrant]\nurl_env = "QDRANT_URL"\napi_key_env = "QDRANT_API_KEY"\n'
        'index = "existing"\ncollection = "notes"\nid_key = "doc_id"\n'
    )
    (tmp_path / "pr" / "retrieval-eval.toml").write_text(
        '[retrievers.qdrant]\nurl = "https://theirs.example/qdrant"\n'
        'api_key_env = "QDRANT_API_KEY"\ntimeout_s = 3000\n'
        'index = "existing"\ncollection = "notes_v2"\nid_key = "doc"\n\n'
        '[retrievers.milvus]\nurl = "https://theirs.example/milvus"\ntoken_env = "MILVUS_TOKEN"\n'
    )
    done = subprocess.run(
        [sys.executable, "-c", ENGINE_TRUST, str(tmp_path / "base"), str(tmp_path / "pr")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    qdrant, milvus = answer["tables"]["qdrant"], answer["tables"]["milvus"]
    assert (qdrant["url"], qdrant["url_env"], qdrant["api_key_env"]) == (
        None,
        "QDRANT_URL",
        "QDRANT_API_KEY",
    )
    assert qdrant["timeout_s"] == 30
    assert (qdrant["collection"], qdrant["id_key"]) == ("notes_v2", "doc")
    assert (milvus["url"], milvus["url_env"], milvus["token_env"]) == (None, None, None)
    proposed = dict(answer["proposed"])
    assert "retrievers.qdrant.url: (none)" in proposed
    assert proposed["retrievers.qdrant.url: (none)"] == "https://theirs.example/qdrant"
