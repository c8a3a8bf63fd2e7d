"""The environment every child process gets: ours, less the secrets.

Children are the user's retriever command and ``git``; the retriever is code
from the pull request under review, so it must not see the token that can
comment, set statuses or (with a personal token) push. The edge calls
``withhold_secrets`` before anything starts a child, which removes the secrets
from this process's environment so that every child inherits the result of
``child_env`` whoever starts it, and registers their values for redaction.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, MutableMapping

from retrieval_eval.trust.redaction import register_secret

# The runner's and the Action's credentials. The ACTIONS_ID_TOKEN_REQUEST_* pair mints OIDC
# tokens that cloud providers trust; ACTIONS_RUNTIME_TOKEN writes caches and artifacts.
WITHHELD_BY_DEFAULT: tuple[str, ...] = (
    "INPUT_GITHUB-TOKEN",
    "INPUT_GITHUB_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_*",
)
# The runner's file commands: a child that writes GITHUB_ENV or GITHUB_PATH acts on every
# later step of the job (BASH_ENV, a PATH entry), GITHUB_OUTPUT and GITHUB_STEP_SUMMARY
# forge this step's results, GITHUB_STATE its post step. Not secrets (their values are
# paths, not masked), but no child's to use. RUNNER_TEMP names the folder that holds them
# (and checkout's persisted credentials, from its v6): withheld too, and the boundary closes
# those folders to the child's user (trust/boundary.py).
RUNNER_FILE_COMMANDS: tuple[str, ...] = (
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_OUTPUT",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
)
RUNNER_PATHS: tuple[str, ...] = (*RUNNER_FILE_COMMANDS, "RUNNER_TEMP")
# Secrets children may legitimately need (a retriever can call Claude too), so they are
# passed on, but their values are still masked in everything we write.
REDACTED_NOT_WITHHELD: tuple[str, ...] = ("ANTHROPIC_API_KEY",)


def is_withheld(name: str, patterns: Iterable[str]) -> bool:
    if name in RUNNER_PATHS:
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in (*WITHHELD_BY_DEFAULT, *patterns))


def child_env(parent: Mapping[str, str], patterns: Iterable[str] = ()) -> dict[str, str]:
    """``parent`` without the default secrets and the names matching the user's ``patterns``."""
    chosen = tuple(patterns)
    return {name: value for name, value in parent.items() if not is_withheld(name, chosen)}


def withhold_secrets(
    environ: MutableMapping[str, str], patterns: Iterable[str] = ()
) -> dict[str, str]:
    """Make ``environ`` what a child may see; return what was taken out (for the edge to use).

    Every withheld or redact-only value is registered with the redaction choke point.
    """
    kept = child_env(environ, patterns)
    taken = {name: value for name, value in environ.items() if name not in kept}
    for name in taken:
        del environ[name]
    for name, value in taken.items():
        if name not in RUNNER_PATHS:
            register_secret(value)
    for name in REDACTED_NOT_WITHHELD:
        register_secret(environ.get(name))
    return taken
