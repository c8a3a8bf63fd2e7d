"""``validate_datasets``: every problem in every dataset file, in one pass over each file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.fixtures import LocatedFixture
from retrieval_eval.sharding import Shard
from retrieval_eval.validate.dataset_files import resolve_dataset_files
from retrieval_eval.validate.dataset_rules import CorpusRules, check_counts, check_type_matches_file
from retrieval_eval.validate.fixture_file import ForeignLine, read_fixture_file_share
from retrieval_eval.validate.problems import Problem


@dataclass(frozen=True)
class ValidationReport:
    """``datasets`` maps each validated file to its valid fixtures (empty lists when the
    caller asked not to keep them); ``ignored`` lists *.jsonl files in a folder that are
    not dataset files; ``fixture_count`` counts valid fixtures even when none are kept.
    A shard's validation keeps only its own fixtures in ``datasets``; ``query_order``
    then holds every query id of each file, in line order."""

    problems: list[Problem]
    datasets: dict[Path, list[LocatedFixture]]
    ignored: list[Path] = field(default_factory=list)
    fixture_count: int = 0
    query_order: dict[Path, tuple[str, ...]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        """The last line `validate` prints: problems counted in the files that hold them."""
        validated = _files(len(self.datasets))
        if not self.problems:
            return f"ok: {validated}, {self.fixture_count} fixtures"
        noun = "problem" if len(self.problems) == 1 else "problems"
        holding = len({problem.file for problem in self.problems})
        where = (
            f"in {validated}"
            if holding == len(self.datasets)
            else f"in {_files(holding)} of the {validated} validated"
        )
        return f"{len(self.problems)} {noun} {where}"


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def validate_datasets(
    paths: Sequence[Path],
    *,
    corpus: Corpus | None,
    min_fixtures: int = 20,
    min_human: int = 10,
    keep_fixtures: bool = True,
    shard: Shard | None = None,
) -> ValidationReport:
    """Validate dataset files or folders; raise InputError only for usage errors
    (a missing path, an unreadable file). ``keep_fixtures=False`` keeps memory
    bounded by the number of query ids rather than the size of the files.

    With ``shard``, only the lines of the shard's own queries are validated (the rest
    are parsed for their query id alone): every rule of one line, and the duplicate
    rule (a query id and its duplicate belong to one shard), holds on those as in an
    unsharded run; the per-file counts include the other shards' lines."""
    resolved = resolve_dataset_files(paths)
    corpus_rules = CorpusRules(corpus) if corpus is not None else None
    first_seen: dict[str, tuple[Path, int]] = {}
    problems: list[Problem] = []
    datasets: dict[Path, list[LocatedFixture]] = {}
    order: dict[Path, tuple[str, ...]] = {}
    total = 0
    for path in resolved.files:
        kept: list[LocatedFixture] = []
        file_problems: list[Problem] = []
        count = human = 0
        query_ids: list[str] = []
        for item in read_fixture_file_share(path, owns=None if shard is None else shard.holds):
            if isinstance(item, Problem):
                file_problems.append(item)
                continue
            if isinstance(item, ForeignLine):
                count += 1
                human += item.human
                query_ids.append(item.query_id)
                continue
            query_ids.append(item.fixture.query_id)
            count += 1
            human += item.fixture.ground_truth_source == "human-annotated"
            type_problem = check_type_matches_file(item)
            if type_problem is not None:
                file_problems.append(type_problem)
            query_id = item.fixture.query_id
            first = first_seen.setdefault(query_id, (path, item.line))
            if first != (path, item.line):
                file_problems.append(
                    Problem(
                        path,
                        item.line,
                        f"duplicate query_id {query_id!r} (first defined at {first[0]}:{first[1]})",
                    )
                )
            if corpus_rules is not None:
                file_problems.extend(corpus_rules.check(item))
            if keep_fixtures:
                kept.append(item)
        file_problems.extend(
            check_counts(
                path, fixtures=count, human=human, min_fixtures=min_fixtures, min_human=min_human
            )
        )
        # Stable sort: line order, and on one line the order the rules ran in.
        problems.extend(sorted(file_problems, key=lambda problem: problem.line))
        datasets[path] = kept
        if shard is not None:
            order[path] = tuple(query_ids)
        total += count
    return ValidationReport(
        problems=problems,
        datasets=datasets,
        ignored=list(resolved.ignored),
        fixture_count=total,
        query_order=order,
    )
