"""Threat: the retriever prints a key whose spelling Markdown escaping changes (``_`` becomes
``\\_``), so a mask that looks only for the raw key after escaping misses it.

The pull request's retriever fails and prints the Anthropic key and the token on stderr;
the error quotes them in the comment, the job summary, the status and the log. Every
channel masks the raw text before it escapes or cuts it: no escaped spelling and no
prefix left by the status's 140-character cut reaches anything.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.entry import World, world_in
from tests.support.runner_env import TOKEN


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


KEY = "sk-ant-api03-Rt4_SECRET_kEy_0123456789abcdef"
# The key after Markdown's escaping, after HTML's, and the part a cut at 140 characters
# would leave behind: none may appear anywhere.
SPELLINGS = [
    KEY,
    KEY.replace("_", "\\_"),
    TOKEN,
    TOKEN.replace("_", "\\_"),
    "Rt4_SECRET",
    "Rt4\\_SECRET",
    "SECRETtoken0123",
]

RETRIEVER = """\
import json, sys
KEY, TOKEN = {key!r}, {token!r}
if sys.argv[1] == "fail":
    # A long first line puts the key right where the status description is cut.
    print("x" * 60 + " " + KEY, file=sys.stderr)
    print("key=" + KEY + " token=" + TOKEN + " *" + KEY + "* [" + TOKEN + "]", file=sys.stderr)
    sys.exit(3)
docs = []
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "index":
        docs = [d["id"] for d in request["documents"]]
        answer = {{"ok": True}}
    else:
        answer = {{"hits": [{{"id": d, "score": 1.0 / (i + 1)}} for i, d in enumerate(docs)]}}
    print(json.dumps(answer), flush=True)
"""


def _retriever(world: World, mode: str) -> dict[str, str]:
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    if "[retrievers.custom]" not in config:
        config += (
            '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
            f"command = {json.dumps([sys.executable, 'search.py', mode])}\n"
        )
    else:
        config = config.replace('"serve"]', f'"{mode}"]')
    return {"search.py": RETRIEVER.format(key=KEY, token=TOKEN), "retrieval-eval.toml": config}


def test_a_key_with_underscores_is_masked_before_any_channel_escapes_it(world: World) -> None:
    base = world.commit(_retriever(world, "serve"), "my retriever")
    head = world.commit(_retriever(world, "fail"), "it fails and prints the key")

    run = world.pull_request(7, base, head, extra_env={"ANTHROPIC_API_KEY": KEY})

    assert run.returncode == 2, run.log
    [comment] = world.github.comments_on(7)
    [status] = world.github.statuses_for(head)
    assert "exited with code 3" in comment["body"]
    assert "\\*\\*\\*" in comment["body"] or "***" in comment["body"]  # the mask is shown
    log = "\n".join(line for line in run.log.splitlines() if not line.startswith("::add-mask::"))
    report_dir = world.workspace / "retrieval-eval-report"
    reports = [p.read_text(encoding="utf-8") for p in report_dir.glob("*") if p.is_file()]
    channels = {
        "the comment": comment["body"],
        "the status": status["description"],
        "the job summary": run.summary,
        "the step outputs": run.outputs_raw,
        "the log": log,
        **{f"report file {i}": text for i, text in enumerate(reports)},
    }
    for where, text in channels.items():
        for spelling in SPELLINGS:
            assert spelling not in text, f"{spelling!r} reached {where}"


DESCRIBING = """\
import json, sys
KEY = {key!r}
docs = []
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "index":
        docs = [d["id"] for d in request["documents"]]
        answer = {{"ok": True, "describe": {{"note": "*" + KEY + "* [" + KEY + "] <" + KEY + ">"}}}}
    else:
        answer = {{"hits": [{{"id": d, "score": 1.0 / (i + 1)}} for i, d in enumerate(docs)]}}
    print(json.dumps(answer), flush=True)
"""


def test_a_key_in_what_the_retriever_says_of_itself_reaches_no_report_file(
    world: World,
) -> None:
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    config += (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f"command = {json.dumps([sys.executable, 'search.py'])}\n"
    )
    sha = world.commit(
        {"search.py": DESCRIBING.format(key=KEY), "retrieval-eval.toml": config}, "describes"
    )

    run = world.push(sha, extra_env={"ANTHROPIC_API_KEY": KEY})

    assert run.returncode == 0, run.log
    report_dir = world.workspace / "retrieval-eval-report"
    written = {
        path.name: path.read_text(encoding="utf-8")
        for path in [*report_dir.glob("*"), world.workspace / "baseline.json"]
        if path.is_file()
    }
    assert {"report.json", "report.md", "baseline.json"} <= set(written)
    assert "***" in written["baseline.json"] and "***" in written["report.json"]  # it was there
    for name, text in {**written, "the job summary": run.summary}.items():
        for spelling in SPELLINGS:
            assert spelling not in text, f"{spelling!r} reached {name}"
