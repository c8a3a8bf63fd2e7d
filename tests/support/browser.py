"""Debian's headless Chromium, for tests that load a page as a reader's browser would.

Chromium runs with a new profile, every background service off and its host resolver
mapping every name to nothing, so a page that tried to fetch anything could not, and
``--enable-logging=stderr`` writes each console message (errors, Content-Security-Policy
violations, uncaught exceptions, ``console.*``) to stderr as an ``INFO:CONSOLE`` line.
Where Chromium is not installed the tests skip, saying so; CI installs it (.ci/run), so
there a missing browser is a failure, not a skip.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

INSTALL = "apt-get install -y chromium"
_CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]?\s*(.*)")


def chromium() -> str:
    """The browser's path; skips (fails in CI) when it is not installed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is not None:
        return found
    reason = f"headless Chromium is not installed (`{INSTALL}`)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI installs it in .ci/run")
    pytest.skip(reason)


def command(browser: str, profile: Path, *extra: str) -> list[str]:
    return [
        browser,
        "--headless",
        "--no-sandbox",  # tests run as root in a container; the page is the test's own file
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *extra,
    ]


@dataclass(frozen=True)
class Loaded:
    dom: str  # the page's DOM after it loaded, serialized
    console: list[str]  # every console message the page caused


def load(
    page: Path, *, screenshot: Path | None = None, width: int = 1000, height: int = 900
) -> Loaded:
    """Open ``page`` as a file: URL; its DOM and console, and a screenshot when asked."""
    browser = chromium()
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        extra = ["--dump-dom"] if screenshot is None else [f"--screenshot={screenshot}"]
        done = subprocess.run(
            command(
                browser, Path(profile), f"--window-size={width},{height}", *extra, page.as_uri()
            ),
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    assert done.returncode == 0, f"chromium exited {done.returncode}:\n{done.stderr[-3000:]}"
    console = [m.group(1) for line in done.stderr.splitlines() if (m := _CONSOLE.search(line))]
    return Loaded(done.stdout, console)
