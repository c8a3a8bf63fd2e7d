"""Progress: a moving bar on a terminal, a line every few seconds in CI logs.

A step that runs longer than ``Pace.after_s`` shows how far it is: on a terminal a
tqdm bar (count, rate, time left) whose timer ticks even while no item finishes;
off a terminal, where a log keeps every carriage-return redraw as a line of its
own, a plain line every ``Pace.every_s`` seconds. Every step ends with one summary
line (count and duration), terminal or not.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Never

from retrieval_eval import deadline

if TYPE_CHECKING:
    from tqdm import tqdm

Log = Callable[[str], None]

_PLURALS = {"query": "queries", "index": "indexes", "batch": "batches"}


def stderr_log(line: str) -> None:
    """A line on stderr; on a terminal, above the progress bar rather than through it."""
    bars = sys.modules.get("tqdm")  # imported with the first bar: without one, a plain line
    if bars is None:
        print(line, file=sys.stderr)
    else:
        bars.tqdm.write(line, file=sys.stderr)


def plural(unit: str, count: float) -> str:
    return unit if count == 1 else _PLURALS.get(unit, unit + "s")


@dataclass(frozen=True)
class Pace:
    """When progress shows: steps shorter than ``after_s`` stay quiet but for their
    summary line; off a terminal a line is logged at most every ``every_s`` seconds;
    on a terminal the bar is redrawn at most every ``redraw_s`` seconds."""

    after_s: float = 1.0
    every_s: float = 5.0
    redraw_s: float = 0.1


class Tracker:
    """What a step hands its worker: ``advance`` by items finished, or ``update`` to
    absolute figures when the worker learns the real total on its way (the chunks of
    a corpus, known only once it is chunked)."""

    def __init__(
        self,
        description: str,
        total: int | None,
        unit: str,
        *,
        interactive: bool,
        log: Log,
        pace: Pace,
        clock: Callable[[], float],
    ) -> None:
        self.description = description
        self.total = total
        self.unit = unit
        # The summary line counts what the step was opened with (documents indexed),
        # even when the worker reports finer items on the way (texts embedded).
        self.summary = (total, unit) if total is not None else None
        self.done = 0
        self._log = log
        self._pace = pace
        self._clock = clock
        self.started = clock()
        self._last_line = self.started
        self._lock = threading.Lock()
        self._bar: tqdm[Never] | None = None
        if interactive:
            from tqdm import tqdm  # only a terminal's bar needs it (a run in CI never does)

            self._bar = tqdm(
                total=total,
                desc=description,
                unit=unit,
                leave=False,
                file=sys.stderr,
                delay=pace.after_s,
                mininterval=pace.redraw_s,
                miniters=1,
                dynamic_ncols=True,
            )

    def advance(self, count: int) -> None:
        with self._lock:
            self.done += count
            if self._bar is not None:
                self._bar.update(count)
        self._maybe_log()

    def update(self, done: int, total: int | None = None, unit: str | None = None) -> None:
        with self._lock:
            if unit is not None:
                self.unit = unit
            if total is not None and total != self.total:
                self.total = total
                if self._bar is not None:
                    self._bar.total = total
                    self._bar.unit = self.unit
            step = done - self.done
            self.done = done
            if self._bar is not None:
                self._bar.update(step)
        self._maybe_log()

    def __call__(self, count: int) -> None:
        self.advance(count)

    def tick(self) -> None:
        """Redraw the bar so its timer moves while no item finishes (a slow first batch)."""
        if self._bar is not None and self._clock() - self.started >= self._pace.after_s:
            self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def note(self, text: str) -> None:
        """One line about the step, said at once (terminal or not): ``DESCRIPTION: TEXT``."""
        self._log(f"{self.description}: {text}")

    def line(self) -> str:
        """``DESCRIPTION: 640/3,000 texts (21%), 85.2 texts/s, about 28 s left``."""
        elapsed = max(self._clock() - self.started, 1e-9)
        rate = self.done / elapsed
        parts = [f"{self.description}: {self.done:,}"]
        if self.total:
            parts[0] += f"/{self.total:,} {plural(self.unit, self.total)}"
            parts[0] += f" ({100 * self.done / self.total:.0f}%)"
        else:
            parts[0] += f" {plural(self.unit, self.done)}"
        parts.append(f"{rate:.1f} {plural(self.unit, 2)}/s")
        if self.total and rate > 0:
            parts.append(f"about {_duration((self.total - self.done) / rate)} left")
        return ", ".join(parts)

    def _maybe_log(self) -> None:
        if self._bar is not None:
            return
        now = self._clock()
        if now - self.started < self._pace.after_s or now - self._last_line < self._pace.every_s:
            return
        self._last_line = now
        self._log(self.line())


@contextmanager
def step(
    description: str,
    total: int | None,
    *,
    interactive: bool,
    log: Log,
    unit: str = "query",
    pace: Pace | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Iterator[Tracker]:
    """Yield a ``Tracker`` to call with each batch of finished items; logs the step's
    count and duration at the end."""
    pace = pace or Pace()
    tracker = Tracker(
        description, total, unit, interactive=interactive, log=log, pace=pace, clock=clock
    )
    stop = threading.Event()
    ticker: threading.Thread | None = None
    if interactive:

        def tick() -> None:
            while not stop.wait(max(pace.redraw_s, 0.1) * 5):
                tracker.tick()

        ticker = threading.Thread(target=tick, name="progress-ticker", daemon=True)
        ticker.start()
    try:
        with deadline.step(description):  # the step a time bound that passes names
            yield tracker
    finally:
        stop.set()
        if ticker is not None:
            ticker.join()
        tracker.close()
    elapsed = clock() - tracker.started
    count, unit = tracker.summary or (tracker.done, tracker.unit)
    log(f"{description}: {count} {plural(unit, count)} in {elapsed:.2f} s")


def estimate_line(documents: int, todo: int, texts: int, seconds: float) -> str:
    """What indexing will take, said before it starts: ``embedding 11,429 documents
    (11,502 texts), about 6 min 10 s``, or, with most of them cached, ``embedding 1 of
    11,502 texts (the rest are in the cache), about 1 s``."""
    about = f"about {_duration(max(seconds, 1.0))}"
    if todo >= texts:
        counted = (
            f"{documents:,} {plural('document', documents)} ({texts:,} {plural('text', texts)})"
        )
        return f"embedding {counted}, {about}"
    return f"embedding {todo:,} of {texts:,} texts (the rest are in the cache), {about}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s"
