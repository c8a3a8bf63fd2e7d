"""Read one dataset file line by line, turning each line into a fixture or into problems.

Streaming matters: a dataset can be large, and the validator must report every
bad line, so a broken line produces problems and reading simply carries on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from retrieval_eval.load.fixtures import Fixture, LocatedFixture
from retrieval_eval.load.invisible import same_id
from retrieval_eval.load.jsonl_lines import iter_jsonl_lines, parse_json_object
from retrieval_eval.load.pydantic_messages import validation_error_messages
from retrieval_eval.validate.problems import Problem


@dataclass(frozen=True)
class ForeignLine:
    """A line another shard validates: its query id (for the fixture order) and whether it
    claims a human source (for the per-file counts), read without validating the line."""

    line: int
    query_id: str
    human: bool


def read_fixture_file(path: Path) -> Iterator[LocatedFixture | Problem]:
    """In line order: a LocatedFixture per valid line, Problems for each invalid one."""
    for item in read_fixture_file_share(path, owns=None):
        assert not isinstance(item, ForeignLine)  # none without ``owns``
        yield item


def read_fixture_file_share(
    path: Path, *, owns: Callable[[str], bool] | None
) -> Iterator[LocatedFixture | Problem | ForeignLine]:
    """:func:`read_fixture_file` for a shard: with ``owns`` (the shard's test of a query
    id), a line whose query id the shard does not own is only parsed as JSON and yielded
    as a ForeignLine: its owner validates it, and fails on it with the same ``FILE:LINE``
    message an unsharded run gives. A line whose query id cannot be read that way is
    validated by every shard.
    """
    for line in iter_jsonl_lines(path):
        if line.problem is not None:
            yield Problem(path, line.number, line.problem)
            continue
        if owns is not None:
            foreign = _foreign(line.text, line.number, owns)
            if foreign is not None:
                yield foreign
                continue
        record = parse_json_object(line.text)
        if isinstance(record, str):
            yield Problem(path, line.number, record)
            continue
        try:
            fixture = Fixture.model_validate(record)
        except ValidationError as error:
            for message in validation_error_messages(error, Fixture):
                yield Problem(path, line.number, message)
            continue
        yield LocatedFixture(fixture=fixture, file=path, line=line.number)


# The common spelling of a fixture line: query_id first, without escapes; and a human
# source, which inside a JSON string would have its quotes escaped. A line spelt otherwise
# is parsed as JSON instead; either way every shard reads the same id from one line.
_LEADING_QUERY_ID = re.compile(r'\s*\{\s*"query_id"\s*:\s*"([^"\\]+)"\s*[,}]')
_HUMAN = re.compile(r'"ground_truth_source"\s*:\s*"human-annotated"')


def _foreign(text: str, number: int, owns: Callable[[str], bool]) -> ForeignLine | None:
    match = _LEADING_QUERY_ID.match(text)
    if match is not None:
        query_id = match.group(1)
        human = _HUMAN.search(text) is not None
    else:
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(record, dict):
            return None
        query_id = record.get("query_id")
        human = record.get("ground_truth_source") == "human-annotated"
    if not isinstance(query_id, str) or not query_id:
        return None
    # The form the owner's validation gives it, so that every shard agrees on the owner.
    query_id = same_id(query_id)
    if owns(query_id):
        return None
    return ForeignLine(number, query_id, human)
