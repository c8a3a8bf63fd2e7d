"""The environment a GitHub runner gives a container action, for tests."""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.action.declared import INPUTS

TOKEN = "ghs_SECRETtoken0123456789abcdefABCDEF"


def runner_env(
    workspace: Path,
    *,
    event_name: str = "pull_request",
    event_path: Path | None = None,
    api_url: str = "http://127.0.0.1:9/api/v3",
    sha: str = "f" * 40,
    **inputs: str,
) -> dict[str, str]:
    """Every declared input at its default (as the runner passes them), overridden by ``inputs``.

    Input keyword names use ``_`` for ``-`` (``github_token`` → ``INPUT_GITHUB-TOKEN``).
    """
    env = {spec.env_name: spec.default for spec in INPUTS}
    env["INPUT_GITHUB-TOKEN"] = TOKEN
    for name, value in inputs.items():
        env["INPUT_" + name.replace("_", "-").upper()] = value
    env.update(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(event_path or workspace / ".event.json"),
            "GITHUB_REPOSITORY": "octo/notes",
            "GITHUB_SHA": sha,
            "GITHUB_API_URL": api_url,
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_RUN_ID": "4242",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_OUTPUT": str(workspace.parent / "github_output"),
            "GITHUB_STEP_SUMMARY": str(workspace.parent / "step_summary.md"),
        }
    )
    return env


def read_outputs(path: Path) -> dict[str, str]:
    """Parse GITHUB_OUTPUT the way the runner does (``name<<DELIM`` blocks; later wins)."""
    outputs: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").split("\n") if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line:
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            outputs[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
            i += 1
        else:
            i += 1
    return outputs
