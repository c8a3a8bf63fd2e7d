"""``retrieval-eval trec``: trec_eval's numbers and output format, without building trec_eval."""

from __future__ import annotations

import json
from pathlib import Path

import click

from retrieval_eval.vocabulary import ExitCode


@click.command("trec")
@click.argument("qrels", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("run", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    help="trec_eval measure, its parameters after a dot (P.5,10), or a nickname: official "
    "(the default), all_trec (every measure of trec_eval 10.0's all_trec). Repeatable.",
)
@click.option("-q", "per_query", is_flag=True, help="Also print each query's values.")
@click.option(
    "-c",
    "complete",
    is_flag=True,
    help="Average over every qrels query; those missing from the run score 0 (trec_eval -c).",
)
@click.option(
    "-l",
    "level",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Lowest grade that counts as relevant (trec_eval -l).",
)
@click.option(
    "-M",
    "max_docs",
    type=click.IntRange(min=1),
    default=None,
    help="Count only each query's top N results (trec_eval -M).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON with unrounded values instead.")
def trec(
    qrels: Path,
    run: Path,
    measures: tuple[str, ...],
    per_query: bool,
    complete: bool,
    level: int,
    max_docs: int | None,
    as_json: bool,
) -> int:
    """Score RUN (qid Q0 docid rank score tag) against QRELS (qid iter docid rel) like trec_eval.

    Ranks come from the scores (descending, ties by document id descending), not
    from the rank column, exactly as trec_eval does.
    """
    from retrieval_eval.tools.trec.report import as_json as to_json
    from retrieval_eval.tools.trec.report import format_trec, score_trec_run

    result = score_trec_run(qrels, run, measures, complete=complete, level=level, max_docs=max_docs)
    if as_json:
        click.echo(json.dumps(to_json(result, per_query=per_query), indent=2))
    else:
        click.echo(format_trec(result, per_query=per_query), nl=False)
    return int(ExitCode.OK)
