"""Progress: a bar on a terminal, one quiet line per step in CI logs.

CI logs keep every carriage-return redraw of a progress bar as a separate
line, so off a terminal each step prints a single summary line instead.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm import tqdm

Log = Callable[[str], None]


def stderr_log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextmanager
def step(
    description: str, total: int, *, interactive: bool, log: Log, unit: str = "query"
) -> Iterator[Callable[[int], None]]:
    """Yield a function to call with each batch of finished items; logs the step's duration."""
    started = time.perf_counter()
    if interactive:
        bar = tqdm(total=total, desc=description, unit=unit, leave=False, file=sys.stderr)

        def advance(count: int) -> None:
            bar.update(count)

        try:
            yield advance
        finally:
            bar.close()
    else:
        yield lambda count: None
    elapsed = time.perf_counter() - started
    noun = unit if total == 1 else {"query": "queries", "index": "indexes"}.get(unit, unit + "s")
    log(f"{description}: {total} {noun} in {elapsed:.2f} s")
