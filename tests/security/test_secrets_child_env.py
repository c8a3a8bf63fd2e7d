"""Threat: the retriever is code from the pull request, and the job holds a write token.

The retriever process must not find the token (or any other runner credential,
or a secret the user lists) in its environment; and if the token reaches the
retriever some other way, whatever the retriever says must not carry it into
the comment, the status, the job summary, the log, the outputs, the report files
or the baseline, in any encoding.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.security.entry import ActionRun, World, run_cli, world_in
from tests.support.runner_env import TOKEN


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


RUNTIME_TOKEN = "actions-runtime-SECRET-0123456789"
OIDC_TOKEN = "oidc-request-SECRET-0123456789"
PASSWORD = "p@ss/w0rd+x=y&z%SECRET"  # a secret the user lists in secret_env
WITHHELD = {
    "GITHUB_TOKEN": TOKEN,
    "ACTIONS_RUNTIME_TOKEN": RUNTIME_TOKEN,
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": OIDC_TOKEN,
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.example/?audience=x",
    "MY_DB_PASSWORD": PASSWORD,
}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# Every form a leak takes below: raw, in a basic-auth header, in a URL, URL-encoded, base64.
LEAKED_FORMS = [
    TOKEN,
    _b64(f"x-access-token:{TOKEN}"),
    _b64(f"{TOKEN}:x-oauth-basic")[:40],
    RUNTIME_TOKEN,
    OIDC_TOKEN,
    PASSWORD,
    quote(PASSWORD, safe=""),
    _b64(PASSWORD),
]

# The token reaches this retriever only because the test writes it in (as if read from
# somewhere we cannot close, e.g. a file the user committed); the environment it gets
# is checked separately, through the dump.
RETRIEVER = """\
import base64, json, os, sys, urllib.parse
TOKEN, PASSWORD = {token!r}, {password!r}
mode, dump = {mode!r}, sys.argv[1]
with open(dump, "w") as handle:
    json.dump(sorted(os.environ), handle)
basic = base64.b64encode(("x-access-token:" + TOKEN).encode()).decode()
oauth = base64.b64encode((TOKEN + ":x-oauth-basic").encode()).decode()
leaks = [TOKEN, basic, oauth, {runtime!r}, {oidc!r}, PASSWORD,
         urllib.parse.quote(PASSWORD, safe=""), base64.b64encode(PASSWORD.encode()).decode()]
if mode == "fail":
    print("debug: leaking " + " | ".join(leaks), file=sys.stderr)
    print("debug: env " + " ".join(k + "=" + v for k, v in os.environ.items()), file=sys.stderr)
    sys.exit(1)
docs = []
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "index":
        docs = [d["id"] for d in request["documents"]]
        answer = {{"ok": True, "describe": {{"auth": "Basic " + basic, "leaks": leaks,
                  "remote": "https://x-access-token:" + TOKEN + "@github.example/o/n.git"}}}}
    else:
        answer = {{"hits": [{{"id": d, "score": 1.0 / (i + 1)}} for i, d in enumerate(docs)]}}
    print(json.dumps(answer), flush=True)
"""


def _leaky_script(mode: str) -> str:
    return RETRIEVER.format(
        token=TOKEN, password=PASSWORD, runtime=RUNTIME_TOKEN, oidc=OIDC_TOKEN, mode=mode
    )


def _use_leaky_retriever(world: World, mode: str, dump: Path) -> dict[str, str]:
    config = (world.workspace / "retrieval-eval.toml").read_text(encoding="utf-8")
    config = config.replace(
        "min_human = 1\n",
        'min_human = 1\nsecret_env = ["MY_*"]\n\n[dataset_retrievers]\n'
        '"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f'command = [{json.dumps(sys.executable)}, "search.py", {json.dumps(str(dump))}]\n',
    )
    return {"search.py": _leaky_script(mode), "retrieval-eval.toml": config}


def _assert_clean(text: str, where: str) -> None:
    for form in LEAKED_FORMS:
        assert form not in text, f"a secret ({form[:12]}…) leaked into {where}"


def _stdout_without_masks(run: ActionRun) -> str:
    return "\n".join(
        line for line in run.stdout.splitlines() if not line.startswith("::add-mask::")
    )


def test_a_failing_retriever_sees_no_secret_and_its_error_reaches_nothing_unmasked(
    world: World,
) -> None:
    # The retriever is configured on the base branch; the pull request changes its code.
    dump = world.runs / "retriever-env.json"
    base = world.commit(_use_leaky_retriever(world, "serve", dump), "my retriever")
    head = world.commit({"search.py": _leaky_script("fail")}, "break my retriever")

    run = world.pull_request(7, base, head, extra_env=dict(WITHHELD))

    assert run.returncode == 2, run.log
    seen = set(json.loads(dump.read_text(encoding="utf-8")))
    assert "GITHUB_WORKSPACE" in seen and "PATH" in seen  # a real environment ...
    assert not {"INPUT_GITHUB-TOKEN", *WITHHELD} & seen  # ... without the secrets
    assert run.outputs["verdict"] == "error"
    [status] = world.github.statuses_for(head)
    assert status["state"] == "error"
    [comment] = world.github.comments_on(7)
    assert "exited with code 1" in comment["body"]
    # The retriever's words are quoted (in full in the annotation), the secrets masked.
    assert "debug: leaking ***" in _stdout_without_masks(run)
    _assert_clean(comment["body"], "the comment")
    _assert_clean(status["description"], "the status")
    _assert_clean(run.summary, "the job summary")
    _assert_clean(run.outputs_raw, "the step outputs")
    _assert_clean(_stdout_without_masks(run), "the log (stdout, annotations)")
    _assert_clean(run.stderr, "the log (stderr)")


def test_the_runner_is_asked_to_mask_the_secrets_before_anything_else_is_printed(
    world: World,
) -> None:
    dump = world.runs / "retriever-env.json"
    base = world.commit(_use_leaky_retriever(world, "serve", dump), "my retriever")
    head = world.commit({"search.py": _leaky_script("fail")}, "break my retriever")

    run = world.pull_request(7, base, head, extra_env=dict(WITHHELD))

    lines = run.stdout.splitlines()
    masks = [line.removeprefix("::add-mask::") for line in lines if line.startswith("::add-mask::")]
    assert lines[0].startswith("::add-mask::")
    assert TOKEN in masks and RUNTIME_TOKEN in masks and OIDC_TOKEN in masks
    assert PASSWORD.replace("%", "%25") in masks  # listed in the config: masked once read


def test_a_push_never_writes_a_secret_into_the_baseline_or_the_report(world: World) -> None:
    dump = world.runs / "retriever-env.json"
    sha = world.commit(_use_leaky_retriever(world, "serve", dump), "my retriever")

    run = world.push(sha, extra_env=dict(WITHHELD))

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "baseline-established"
    baseline = (world.workspace / "baseline.json").read_text(encoding="utf-8")
    assert "***" in baseline  # the retriever described itself with the secrets in it
    _assert_clean(baseline, "baseline.json")
    json.loads(baseline)  # masking keeps it valid JSON
    for report in (run.outputs["report-json"], run.outputs["report-markdown"]):
        _assert_clean(Path(report).read_text(encoding="utf-8"), report)
    _assert_clean(run.summary, "the job summary")
    _assert_clean(_stdout_without_masks(run) + run.stderr, "the log")


def test_run_on_the_command_line_withholds_the_token_from_the_retriever_too(
    world: World,
) -> None:
    dump = world.runs / "cli-env.json"
    world.runs.mkdir(parents=True, exist_ok=True)
    world.commit(_use_leaky_retriever(world, "serve", dump), "my retriever")

    run = run_cli(world.workspace, "run", env={**WITHHELD})

    assert run.returncode == 0, run.log
    assert not set(WITHHELD) & set(json.loads(dump.read_text(encoding="utf-8")))
    _assert_clean(run.log, "the output of retrieval-eval run")


@pytest.mark.slow
def test_a_matrix_shard_withholds_the_listed_secrets_from_the_retriever_too(
    world: World,
) -> None:
    """`mode: evaluate-shard` runs the retriever like `evaluate` does."""
    dump = world.runs / "shard-env.json"
    sha = world.commit(_use_leaky_retriever(world, "serve", dump), "my retriever")

    run = world.push(sha, mode="evaluate-shard", shard="1/1", extra_env=dict(WITHHELD))

    assert run.returncode == 0, run.log
    assert not {"INPUT_GITHUB-TOKEN", *WITHHELD} & set(json.loads(dump.read_text()))
    partial = world.workspace / "retrieval-eval-report" / "partial.json"
    _assert_clean(partial.read_text(encoding="utf-8"), "partial.json")
    _assert_clean(_stdout_without_masks(run) + run.stderr, "the log")
