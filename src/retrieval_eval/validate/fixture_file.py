"""Read one dataset file line by line, turning each line into a fixture or into problems.

Streaming matters: a dataset can be large, and the validator must report every
bad line, so a broken line produces problems and reading simply carries on.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from retrieval_eval.load.fixtures import Fixture, LocatedFixture
from retrieval_eval.load.jsonl_lines import iter_jsonl_lines, parse_json_object
from retrieval_eval.load.pydantic_messages import validation_error_messages
from retrieval_eval.validate.problems import Problem


def read_fixture_file(path: Path) -> Iterator[LocatedFixture | Problem]:
    """In line order: a LocatedFixture per valid line, Problems for each invalid one."""
    for line in iter_jsonl_lines(path):
        if line.problem is not None:
            yield Problem(path, line.number, line.problem)
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
