"""Nothing a retriever starts outlives it: an orphan that left the retriever's session is
adopted and killed; this process's own children are spared. Each case runs in a process
of its own, which becomes the subreaper as an edge does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(2)")

# The "retriever" double-forks a process into a new session (setsid), which writes its pid
# and sleeps; the retriever exits, so init would adopt the sleeper if nothing else did.
PROGRAM = """\
import os, subprocess, sys, time
from retrieval_eval.trust.processes import become_subreaper, children, end_orphans
pid_file, sweep = sys.argv[1], sys.argv[2] == "sweep"
assert become_subreaper() and become_subreaper()
own = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
before = children()
escape = (
    "import os, sys, time\\n"
    "if os.fork(): sys.exit(0)\\n"
    "os.setsid()\\n"
    "if os.fork(): sys.exit(0)\\n"
    f"open({pid_file!r}, 'w').write(str(os.getpid()))\\n"
    "time.sleep(60)\\n"
)
subprocess.run([sys.executable, "-c", escape], check=True)
while not os.path.exists(pid_file) or not open(pid_file).read():
    time.sleep(0.01)
orphan = int(open(pid_file).read())
print("adopted:", orphan in children())
if sweep:
    end_orphans(keep=before)
print("own spared:", own.poll() is None)
print("orphan gone:", not os.path.exists(f"/proc/{orphan}"))
own.kill()
own.wait()
if not sweep:
    os.kill(orphan, 9)
    os.waitpid(orphan, 0)
"""


def run(tmp_path: Path, mode: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path / "orphan.pid"), mode],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_an_escaped_orphan_is_adopted_and_ended_and_own_children_are_spared(
    tmp_path: Path,
) -> None:
    assert run(tmp_path, "sweep") == ["adopted: True", "own spared: True", "orphan gone: True"]


def test_without_a_sweep_the_orphan_would_live_on(tmp_path: Path) -> None:
    assert run(tmp_path, "none") == ["adopted: True", "own spared: True", "orphan gone: False"]
