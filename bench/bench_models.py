"""The embedding models side by side: quality on BEIR folders, throughput, size.

Quality: for each BEIR folder given and each catalogued model, one
`retrieval-eval beir DIR --retriever dense` in a fresh process, as a user runs it, with a
temporary config whose only lines are `[retrievers.dense] model = NAME` and its thread
count; NDCG@10 and Recall@100 come from its --json. Throughput: texts per CPU-second of
this process (``time.process_time``, every thread) embedding the same passages (the first
folder's documents) with each model, rounds interleaved so a load spike hits every model
alike, the median of the rounds, and each model's ratio to all-MiniLM-L6-v2 in the same
round. Size: the bytes of the installed model folder. Writes the Markdown table, with the
command, the machine, its load and the date, to --out (docs/model-comparison.md) and
prints the throughput table for docs/benchmarks.md.

    .venv/bin/python bench/bench_models.py --beir DATASETS/cranfield/beir \
        --beir DATASETS/vaswani/beir --threads 1 --rounds 3 --texts 100 --jobs 2

Resumable: every finished cell (one folder, one model) and the throughput rounds are kept
as JSON under --work, and a second run with the same folders and settings measures only
what is missing; --only-kept rewrites --out from what is kept and measures nothing. --out
is rewritten as each cell finishes, so a run stopped part way leaves the table with what
it measured and names the cells it lacks. The `beir` runs share one embedding cache
(--cache-dir, `beir`'s own default), which the dense retriever fills every 1,024 chunks,
so a stopped cell resumed embeds only what was not yet stored. Cells run shortest first,
each estimated in CPU time from a probe (every model embedding the first 16 passages,
which is also the warm-up of the timed rounds) and the folder's characters; every
finished cell prints the time left.

Every model must be installed (`make test` installs them; `retrieval-eval model list`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.index.model_catalog import DEFAULT_MODEL, MODELS
from retrieval_eval.index.model_install import default_model_dir, model_folder
from retrieval_eval.index.text_embedding import TextEmbedding

REPO = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).parent / "retrieval-eval"
DEFAULT_WORK = Path(".bench-data") / "models"
DEFAULT_CACHE = Path(".retrieval-eval-cache")  # `retrieval-eval beir`'s default --cache-dir
MISSING = "—"
# The models measured: every catalogued one, or those --models names.
MEASURED: list[str] = list(MODELS)
# A finished cell or the throughput rounds, as kept under --work.
Record = dict[str, Any]


@dataclass(frozen=True)
class Folder:
    """One BEIR folder: its name in the table and what identifies its contents."""

    path: Path
    name: str
    corpus_sha256: str
    documents: int
    corpus_chars: int
    queries: int
    query_chars: int


def folder(path: Path) -> Folder:
    corpus = (path / "corpus.jsonl").read_bytes()
    documents = [json.loads(line) for line in corpus.splitlines() if line.strip()]
    queries = [
        json.loads(line)
        for line in (path / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return Folder(
        path=path,
        name=path.parent.name if path.name == "beir" else path.name,
        corpus_sha256=hashlib.sha256(corpus).hexdigest(),
        documents=len(documents),
        corpus_chars=sum(len(_passage(doc)) for doc in documents),
        queries=len(queries),
        query_chars=sum(len(query["text"]) for query in queries),
    )


def _passage(doc: dict[str, str]) -> str:
    return f"{doc.get('title', '')}\n{doc['text']}".strip()


def passages(directory: Path, count: int) -> list[str]:
    texts: list[str] = []
    with (directory / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            texts.append(_passage(json.loads(line)))
            if len(texts) == count:
                break
    return texts


def quality(data: Folder, model: str, threads: int, work: Path, cache_dir: Path) -> Record:
    """One `beir` run, kept as JSON under ``work``: a finished cell is never run again."""
    done = _cell_file(work, data, model)
    if (kept := _read_cell(done, data, model, threads)) is not None:
        return kept
    runs = work / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    config = runs / f"{model}.toml"
    config.write_text(f'[retrievers.dense]\nmodel = "{model}"\nthreads = {threads}\n')
    summary_path = runs / f"{data.name}-{model}.json"
    command = [str(CLI), "beir", str(data.path), "--retriever", "dense"]
    command += ["--config", str(config), "--cache-dir", str(cache_dir), "--json", str(summary_path)]
    start = time.monotonic()
    load_before = os.getloadavg()[0]
    with (runs / f"{data.name}-{model}.log").open("w") as log:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, cwd=runs)
        # wait4 gives this child's own CPU time, whatever else runs beside it.
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {child.returncode}; see {log.name}")
    summary = json.loads(summary_path.read_text())
    cell = {
        "dataset": data.name,
        "corpus_sha256": data.corpus_sha256,
        "model": model,
        "threads": threads,
        "ndcg@10": summary["ndcg@10"],
        "recall@100": summary["recall@100"],
        "embedded_texts": summary.get("embedded_texts"),
        "cached_embeddings": summary.get("cached_embeddings"),
        "wall_s": time.monotonic() - start,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "load": {"before": load_before, "after": os.getloadavg()[0]},
        "date": _today(),
    }
    atomic_write_text(done, json.dumps(cell, indent=2) + "\n")
    return cell


def _today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def _cell_file(work: Path, data: Folder, model: str) -> Path:
    return work / "cells" / f"{data.name}-{data.corpus_sha256[:12]}-{model}.json"


def _read_cell(path: Path, data: Folder, model: str, threads: int) -> Record | None:
    if not path.exists():
        return None
    cell = json.loads(path.read_text())
    same = (cell["corpus_sha256"], cell["model"], cell["threads"])
    return cell if same == (data.corpus_sha256, model, threads) else None


def folder_bytes(path: Path) -> int:
    return sum(file.stat().st_size for file in path.iterdir() if file.is_file())


class Throughput:
    """Every model loaded in this process, timed on the same passages."""

    def __init__(self, texts: list[str], threads: int) -> None:
        default_dir = default_model_dir(Path.home())
        self.texts = texts
        self.mean_chars = sum(map(len, texts)) / len(texts)
        self.functions = {
            name: TextEmbedding(
                model_folder(default_dir, spec), intra_op_threads=threads, model=name
            )
            for name, spec in MODELS.items()
            if name in MEASURED
        }

    def probe(self, count: int) -> dict[str, float]:
        """Characters per CPU-second on the first ``count`` passages, once: the estimate
        of each quality cell, and the warm-up (session, engine) outside the timed rounds."""
        sample = self.texts[:count]
        rates = {}
        for name, function in self.functions.items():
            start = time.process_time()
            function.embed(sample)
            rates[name] = sum(map(len, sample)) / (time.process_time() - start)
        return rates

    def rounds(self, rounds: int) -> tuple[dict[str, float], dict[str, float]]:
        """Median texts per CPU-second per model, and the median per-round ratio to the
        default."""
        rates: dict[str, list[float]] = {name: [] for name in self.functions}
        ratios: dict[str, list[float]] = {name: [] for name in self.functions}
        for number in range(rounds):
            this_round: dict[str, float] = {}
            for name, function in self.functions.items():
                start = time.process_time()
                function.embed(self.texts)
                this_round[name] = len(self.texts) / (time.process_time() - start)
                rates[name].append(this_round[name])
            for name in self.functions:
                ratios[name].append(this_round[name] / this_round[DEFAULT_MODEL])
            rounded = ", ".join(f"{name} {rate:.1f}" for name, rate in this_round.items())
            print(f"throughput round {number + 1}/{rounds}: {rounded} texts/CPU-s", file=sys.stderr)
        return (
            {name: statistics.median(values) for name, values in rates.items()},
            {name: statistics.median(values) for name, values in ratios.items()},
        )


def throughput_key(first: Folder, args: argparse.Namespace) -> dict[str, object]:
    return {
        "corpus_sha256": first.corpus_sha256,
        "texts": args.texts,
        "threads": args.threads,
        "rounds": args.rounds,
    }


def kept_throughput(path: Path, key: dict[str, object]) -> Record | None:
    if not path.exists():
        return None
    result: Record = json.loads(path.read_text())
    return result if result.get("key") == key else None


class Progress:
    """Estimated CPU seconds per pending cell; prints the time left as cells finish."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.started = time.monotonic()
        self.estimates: dict[tuple[str, str], float] = {}
        self.done_estimated = 0.0
        self.lock = threading.Lock()

    def estimate(self, data: Folder, model: str, chars_per_s: float) -> None:
        self.estimates[(data.name, model)] = (data.corpus_chars + data.query_chars) / chars_per_s

    def show_plan(self) -> None:
        for (name, model), seconds in self.estimates.items():
            print(f"estimate {name} {model}: {seconds / 60:.1f} CPU-min", file=sys.stderr)
        total = sum(self.estimates.values())
        print(
            f"estimate: {total / 60:.1f} CPU-min in all, {total / 60 / self.jobs:.1f} min "
            f"with {self.jobs} job(s) on free cores (longer on a loaded machine)",
            file=sys.stderr,
        )

    def finished(self, name: str, model: str, cell: dict[str, float]) -> None:
        with self.lock:
            self.done_estimated += self.estimates.get((name, model), 0.0)
            total = sum(self.estimates.values())
            elapsed = time.monotonic() - self.started
            # The wall time per estimated CPU-second so far stands for the load from now on.
            left = (total - self.done_estimated) * elapsed / max(self.done_estimated, 1e-9)
            print(
                f"{name} {model}: NDCG@10 {cell['ndcg@10']:.4f} R@100 {cell['recall@100']:.4f}"
                f" ({cell.get('wall_s', 0) / 60:.1f} min, {cell.get('cpu_s', 0) / 60:.1f} "
                f"CPU-min); about {left / 60:.0f} min left",
                file=sys.stderr,
            )


def display_command(args: argparse.Namespace, folders: list[Folder]) -> str:
    """The command, with each BEIR folder as DATASETS/NAME/beir and no machine path."""
    lines = [".venv/bin/python bench/bench_models.py"]
    lines += [f"--beir DATASETS/{data.path.parent.name}/{data.path.name}" for data in folders]
    lines.append(
        f"--threads {args.threads} --rounds {args.rounds} --texts {args.texts} --jobs {args.jobs}"
    )
    if args.models:
        lines.append(f"--models {','.join(MEASURED)}")
    return " \\\n    ".join(lines)


def machine() -> str:
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores ({model or platform.machine()}), {platform.system()}"


def quality_table(
    folders: list[Folder],
    results: dict[tuple[str, str], Record],
    speed: Record | None,
) -> str:
    default_dir = default_model_dir(Path.home())
    header = ["model"]
    for data in folders:
        header += [f"{data.name} NDCG@10", f"{data.name} Recall@100"]
    header += ["texts/s (CPU)", "× all-MiniLM-L6-v2", "size (MB)"]
    rows = [header, ["---"] + ["---:"] * (len(header) - 1)]
    for model, spec in MODELS.items():
        if model not in MEASURED:
            continue
        row = [f"`{model}`" + (f" ({spec.auto_rule})" if spec.auto_rule else "")]
        for data in folders:
            cell = results.get((data.name, model))
            row += [
                MISSING if cell is None else f"{cell[m]:.4f}" for m in ("ndcg@10", "recall@100")
            ]
        if speed is None:
            row += [MISSING, MISSING]
        else:
            row += [f"{speed['rates'][model]:.1f}", f"{speed['ratios'][model]:.2f}"]
        row.append(f"{folder_bytes(model_folder(default_dir, spec)) / 1e6:.0f}")
        rows.append(row)
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def _paragraph(text: str) -> str:
    wrapped = textwrap.fill(text, width=92, break_long_words=False, break_on_hyphens=False)
    return wrapped + "\n\n"


def render(
    args: argparse.Namespace,
    folders: list[Folder],
    results: dict[tuple[str, str], Record],
    speed: Record | None,
) -> str:
    table = quality_table(folders, results, speed)
    records = [*results.values(), *([speed] if speed is not None else [])]
    loads = [
        record["load"][when]
        for record in records
        if "load" in record
        for when in ("before", "after")
    ]
    loads = loads or [os.getloadavg()[0]]
    dates = [record["date"] for record in records if "date" in record] or [_today()]
    missing = [
        f"{data.name} × `{model}`"
        for data in folders
        for model in MEASURED
        if (data.name, model) not in results
    ]
    gaps = (
        _paragraph(
            "Not measured (—): "
            + ", ".join(missing)
            + ". The run was stopped before these cells finished; the command keeps every "
            "finished cell under its --work folder, so running it again measures only these."
        )
        if missing
        else ""
    )
    if speed is None:
        gaps += _paragraph("Throughput (—) was not measured in this run.")
    cpu = [
        f"{data.name} × `{model}` {cell['cpu_s'] / 60:.1f}"
        + (
            f" ({cell['cached_embeddings']:,} texts from the cache)"
            if cell.get("cached_embeddings")
            else ""
        )
        for data in folders
        for model in MEASURED
        if "cpu_s" in (cell := results.get((data.name, model), {}))
    ]
    cost = (
        _paragraph(
            f"CPU minutes each `beir` run took, embedding its folder included: {', '.join(cpu)}."
        )
        if cpu
        else ""
    )
    sizes = "; ".join(
        f"{data.name}: {data.documents:,} documents, {data.queries} queries" for data in folders
    )
    intro = _paragraph(
        "Every model `[retrievers.dense] model = NAME` can name (`retrieval-eval model list`), "
        "each through `retrieval-eval beir DIR --retriever dense` with the rest of the dense "
        f"settings at their defaults ({sizes}). Generated by one command:"
    )
    return TEMPLATE.format(
        command=display_command(args, folders),
        table=table,
        gaps=gaps,
        cost=cost,
        intro=intro,
        texts=args.texts,
        first=folders[0].name,
        threads=args.threads,
        rounds=args.rounds,
        machine=machine(),
        load=f"{min(loads):.1f}–{max(loads):.1f}",
        date=" to ".join(sorted({min(dates), max(dates)})),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--beir", type=Path, action="append", required=True, help="BEIR folder")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1, help="quality runs side by side")
    parser.add_argument("--texts", type=int, default=400, help="passages timed per round")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "model-comparison.md")
    parser.add_argument(
        "--work", type=Path, default=DEFAULT_WORK, help="finished cells are kept here"
    )
    parser.add_argument(
        "--cache-dir", type=Path, default=DEFAULT_CACHE, help="the beir runs' embedding cache"
    )
    parser.add_argument(
        "--only-kept",
        action="store_true",
        help="write --out from what --work keeps, measuring nothing",
    )
    parser.add_argument(
        "--models",
        help=f"comma-separated models to measure (default: all; {DEFAULT_MODEL} always)",
    )
    args = parser.parse_args()
    if args.models:
        named = [name.strip() for name in args.models.split(",") if name.strip()]
        unknown = [name for name in named if name not in MODELS]
        if unknown:
            parser.error(f"unknown model(s): {', '.join(unknown)}")
        MEASURED[:] = [name for name in MODELS if name in {DEFAULT_MODEL, *named}]

    folders = [folder(path.absolute()) for path in args.beir]
    work = args.work.absolute()
    cache_dir = args.cache_dir.absolute()
    work.mkdir(parents=True, exist_ok=True)
    results: dict[tuple[str, str], Record] = {}
    pending: list[tuple[Folder, str]] = []
    for data in folders:
        for model in MEASURED:
            kept = _read_cell(_cell_file(work, data, model), data, model, args.threads)
            if kept is None:
                pending.append((data, model))
            else:
                results[(data.name, model)] = kept
                print(f"{data.name} {model}: kept from an earlier run (--work)", file=sys.stderr)

    throughput_file = work / "throughput.json"
    key = throughput_key(folders[0], args)
    speed = kept_throughput(throughput_file, key)
    if args.only_kept:
        atomic_write_text(args.out, render(args, folders, results, speed))
        return 0
    timer = None
    if speed is None:
        timer = Throughput(passages(folders[0].path, args.texts), args.threads)
        chars_per_s = timer.probe(min(16, args.texts))
    else:
        print("throughput: kept from an earlier run (--work)", file=sys.stderr)
        chars_per_s = speed["chars_per_s"]
    progress = Progress(args.jobs)
    for data, model in pending:
        progress.estimate(data, model, chars_per_s[model])
    progress.show_plan()

    write_lock = threading.Lock()

    def write() -> None:
        with write_lock:
            atomic_write_text(args.out, render(args, folders, results, speed))

    failures = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        # The quality runs are processes of their own, started first: on a shared machine
        # running them side by side (--jobs) gets them more of the cores, and changes no
        # score. The shortest first, so a run stopped part way has measured the most cells.
        # The throughput rounds run here meanwhile, in this process's CPU time.
        order = sorted(pending, key=lambda cell: progress.estimates[(cell[0].name, cell[1])])
        futures: dict[Future[Record], tuple[str, str]] = {
            pool.submit(quality, data, model, args.threads, work, cache_dir): (data.name, model)
            for data, model in order
        }
        if timer is not None:
            load_before = os.getloadavg()[0]
            rates, ratios = timer.rounds(args.rounds)
            speed = {
                "key": key,
                "rates": rates,
                "ratios": ratios,
                "chars_per_s": chars_per_s,
                "load": {"before": load_before, "after": os.getloadavg()[0]},
                "date": _today(),
            }
            atomic_write_text(throughput_file, json.dumps(speed, indent=2) + "\n")
            del timer  # the models' memory, before the quality runs need it
        write()
        for future in as_completed(futures):
            name, model = futures[future]
            try:
                cell = future.result()
            except Exception as error:  # one failed cell must not lose the others
                failures += 1
                print(f"{name} {model}: failed: {error}", file=sys.stderr)
                continue
            results[(name, model)] = cell
            progress.finished(name, model, cell)
            write()
    write()
    print(quality_table(folders, results, speed))
    if speed is not None:
        print(benchmarks_table(speed))
    return 1 if failures else 0


def benchmarks_table(speed: Record) -> str:
    rows = [
        "| model | texts per CPU-second | × all-MiniLM-L6-v2 (same round) |",
        "| --- | ---: | ---: |",
    ]
    for model in MEASURED:
        rows.append(f"| `{model}` | {speed['rates'][model]:.1f} | {speed['ratios'][model]:.2f}× |")
    return "\n".join(rows)


TEMPLATE = """# Embedding models compared

{intro}```sh
{command}
```

Each `--beir` names a folder in BEIR's layout (`corpus.jsonl`, `queries.jsonl`,
`qrels/test.tsv`), and `DATASETS/...` stands for wherever yours are. Both collections
are public research data with human relevance judgments: Cranfield (aeronautics abstracts,
long natural-language questions) ships gzipped in `tests/data/cranfield`, and docs/datasets.md
shows the three `gunzip` lines that make its BEIR folder; Vaswani (NPL: short physics
abstracts, short keyword requests) is distributed by IR toolkits such as Terrier and
ir_datasets (`vaswani`) and is converted to the same layout. Any other BEIR folder can be
given instead.

{table}

{gaps}**Informational.** This table does not change the default: `model = "auto"` chooses
`all-MiniLM-L6-v2`, or its int8 copy above 10,000 documents, unless another model shows a
gain that holds under cross-validation on both collections, the rule every default here is
chosen by (docs/retrievers.md).

Measured on {date}, on {machine},
shared with other jobs (load average {load} during the run). Throughput: the first
{texts} passages of {first}, {threads} thread(s), median of {rounds} interleaved rounds in
one process; the ratio is the median of the per-round ratios against all-MiniLM-L6-v2.
Texts per CPU-second counts every thread of the process, so a loaded machine changes it
less than wall time; the ratio in the same round is the figure to compare. Size is the
installed model folder.

{cost}What the models are, where their weights come from and how each is checked against
its reference: docs/model.md ("Other models").
"""


if __name__ == "__main__":
    raise SystemExit(main())
