"""Nothing a retriever starts outlives it: an orphan that left the retriever's session is
adopted and killed; this process's own children are spared. Each case runs in a process
of its own, which becomes the subreaper as an edge does."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(2)")

# The "retriever" double-forks a process into a new session (setsid), which sleeps; the
# retriever exits, so init would adopt the sleeper if nothing else did.
PROGRAM = """\
import os, subprocess, sys
from retrieval_eval.trust.processes import become_subreaper, children, end_orphans
sweep = sys.argv[1] == "sweep"
assert become_subreaper() and become_subreaper()
own = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
before = children()
# The escape: fork, leave the session, fork again; the middle process exits at once. The
# orphan says its pid (through a pipe, which this process reads) once it is re-parented.
escape = (
    "import os, sys, time\\n"
    "w = int(sys.argv[1])\\n"
    "if os.fork(): sys.exit(0)\\n"
    "os.setsid()\\n"
    "middle = os.getpid()\\n"
    "if os.fork(): sys.exit(0)\\n"
    "while os.getppid() == middle: os.sched_yield()\\n"
    "os.write(w, str(os.getpid()).encode())\\n"
    "os.close(w)\\n"
    "time.sleep(60)\\n"
)
# A child this process starts while the retriever runs (git, say): not in ``keep``, but in
# this process's session, so no sweep may end it.
late = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
read_end, write_end = os.pipe()
subprocess.run([sys.executable, "-c", escape, str(write_end)], pass_fds=(write_end,), check=True)
os.close(write_end)
orphan = int(os.read(read_end, 32))
print("adopted:", orphan in children())
if sweep:
    end_orphans(keep=before)
print("own spared:", own.poll() is None and late.poll() is None)
print("orphan gone:", not os.path.exists(f"/proc/{orphan}"))
for child in (own, late):
    child.kill()
    child.wait()
if not sweep:
    os.kill(orphan, 9)
    os.waitpid(orphan, 0)
"""


def run(mode: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, mode],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_an_escaped_orphan_is_adopted_and_ended_and_own_children_are_spared() -> None:
    assert run("sweep") == ["adopted: True", "own spared: True", "orphan gone: True"]


def test_without_a_sweep_the_orphan_would_live_on() -> None:
    assert run("none") == ["adopted: True", "own spared: True", "orphan gone: False"]
