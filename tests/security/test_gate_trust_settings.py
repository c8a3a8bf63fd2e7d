"""The trust settings come from the base commit too: a PR cannot widen what it may read or see.

Threat: `secret_env` lists variables the retriever (code from the pull request)
must not see, and `outside_roots` names the only folders outside the repository
a dataset or note may resolve into. A pull request that drops a name from the
first, or adds `/` to the second, would hand itself a secret or the runner's
files. Its own run keeps the base commit's values (secret_env: the union of
both, since withholding more is always safe); its changes take effect after merge.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.action.project import CONFIG
from tests.render.github_html import read
from tests.security.harness import Repo

pytestmark = pytest.mark.slow

PASSWORD = "hunter2-SECRET-0123456789"
# A command retriever that records the environment it was given, then fails.
DUMP_ENV = """\
import json, os, sys
with open(sys.argv[1], "w") as handle:
    json.dump(sorted(os.environ), handle)
sys.exit(1)
"""


def _main_with_a_secret(repo: Repo, dump: Path) -> tuple[str, str]:
    """The default branch: a command retriever that dumps its environment to ``dump``, and
    `secret_env` naming MY_DB_PASSWORD; a feature branch from it. Returns the commit and the
    retriever's configuration lines."""
    custom = (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f'command = [{json.dumps(sys.executable)}, "dump_env.py", {json.dumps(str(dump))}]\n'
    )
    main = repo.commit(
        {
            "retrieval-eval.toml": 'secret_env = ["MY_DB_PASSWORD"]\n' + CONFIG + custom,
            "dump_env.py": DUMP_ENV,
        },
        "a custom retriever, and a secret it must not see",
    )
    repo.branch("feature", main)
    return main, custom


def test_a_pr_cannot_drop_a_name_from_secret_env(
    repo: Repo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    dump = tmp_path_factory.mktemp("dump") / "env.json"
    main, custom = _main_with_a_secret(repo, dump)
    head = repo.commit({"retrieval-eval.toml": CONFIG + custom}, "drop secret_env")

    # The step's env, as `env:` in the workflow sets it.
    run = repo.pull_request(30, main, head, extra_env={"MY_DB_PASSWORD": PASSWORD})

    assert run.outputs["verdict"] == "error", run.log  # the retriever fails on purpose
    seen = json.loads(dump.read_text(encoding="utf-8"))
    assert "MY_DB_PASSWORD" not in seen
    assert "INPUT_GITHUB-TOKEN" not in seen
    assert PASSWORD not in run.comment
    # The base commit's secret is masked: announced to the runner, and nowhere else in the log.
    assert f"::add-mask::{PASSWORD}" in run.log.splitlines()
    assert [line for line in run.log.splitlines() if PASSWORD in line] == [
        f"::add-mask::{PASSWORD}"
    ]
    page = read(run.comment)
    assert "secret_env" in page.text and "takes effect after merge" in page.text


def test_a_pr_cannot_add_an_outside_root(
    repo: Repo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "private.md").write_text("# Private\n\nNot part of the repository.\n")
    main = repo.head()
    repo.branch("feature", main)
    (repo.path / "datasets/corpus/private.md").symlink_to(outside / "private.md")
    head = repo.commit(
        {"retrieval-eval.toml": f"outside_roots = [{json.dumps(str(outside))}]\n" + CONFIG},
        "read a file from outside the repository",
    )

    run = repo.pull_request(31, main, head)

    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    assert "Not part of the repository" not in run.comment
    page = read(run.comment)
    assert "outside_roots" in page.text
    assert "takes effect after merge" in page.text


def test_a_matrix_shard_of_a_pr_keeps_the_base_commits_trust_settings_too(
    repo: Repo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`mode: evaluate-shard` runs the pull request's retriever over its corpus just as
    `evaluate` does: the pull request can neither drop a name from `secret_env` nor add
    a folder to `outside_roots` for it."""
    dump = tmp_path_factory.mktemp("dump") / "env.json"
    outside = tmp_path_factory.mktemp("outside")
    (outside / "private.md").write_text("# Private\n\nNot part of the repository.\n")
    main, custom = _main_with_a_secret(repo, dump)
    widened = f"outside_roots = [{json.dumps(str(outside))}]\n" + CONFIG + custom
    head = repo.commit({"retrieval-eval.toml": widened}, "drop secret_env, widen the roots")
    shard = {"mode": "evaluate-shard", "shard": "1/1"}

    seeing = repo.pull_request(32, main, head, extra_env={"MY_DB_PASSWORD": PASSWORD}, **shard)
    seen = json.loads(dump.read_text(encoding="utf-8"))
    (repo.path / "datasets/corpus/private.md").symlink_to(outside / "private.md")
    reading = repo.pull_request(33, main, head, **shard)

    assert seeing.returncode == 2, seeing.log  # the retriever fails on purpose
    assert "MY_DB_PASSWORD" not in seen
    assert reading.returncode == 2, reading.log
    assert "private.md" in reading.log and "outside" in reading.log
