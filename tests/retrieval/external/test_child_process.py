"""What stopping a retriever's process ends, and what it leaves alone."""

from __future__ import annotations

import subprocess
import sys
import time

from retrieval_eval.retrieval.external.child_process import ChildProcess

# Waits until its stdin closes: alive exactly as long as the test holds the pipe.
WAIT = [sys.executable, "-c", "import sys; sys.stdin.read()"]


def test_stopping_a_retriever_spares_the_children_that_were_running_before_it() -> None:
    earlier = subprocess.Popen(WAIT, stdin=subprocess.PIPE)
    try:
        retriever = ChildProcess(WAIT, cwd=None)
        later = ChildProcess(WAIT, cwd=None)

        retriever.stop(grace_s=5.0)

        assert earlier.poll() is None, "a child started before the retriever was killed"
        later.write(b"still there\n", deadline=time.monotonic() + 60)  # raises if it is gone
        assert later.stop(grace_s=5.0) == 0  # it exits by itself once its stdin closes
    finally:
        assert earlier.stdin is not None
        earlier.stdin.close()
        assert earlier.wait() == 0
