"""The embedding models side by side: quality on BEIR folders, throughput, size.

Quality: for each BEIR folder given and each catalogued model, one
`retrieval-eval beir DIR --retriever dense` in a fresh process, as a user runs it, with a
temporary config whose only line is `[retrievers.dense] model = NAME`; NDCG@10 and
Recall@100 come from its --json. Throughput: texts per CPU-second of this process
(``time.process_time``, every thread) embedding the same passages (the first folder's
documents) with each model, rounds interleaved so a load spike hits every model alike,
the median of the rounds, and each model's ratio to all-MiniLM-L6-v2 in the same round.
Size: the bytes of the installed model folder. Writes the Markdown table, with this
command, to --out (docs/model-comparison.md) and prints the throughput table for
docs/benchmarks.md.

    .venv/bin/python bench/bench_models.py --beir PATH/cranfield/beir \
        --beir PATH/vaswani/beir --threads 1 --jobs 3

Every model must be installed (`make test` installs them; `retrieval-eval model list`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from retrieval_eval.index.embedding import MiniLMEmbedding
from retrieval_eval.index.model_catalog import DEFAULT_MODEL, MODELS
from retrieval_eval.index.model_install import default_model_dir, model_folder

REPO = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).parent / "retrieval-eval"


def quality(directory: Path, model: str, threads: int, work: Path) -> dict[str, float]:
    config = work / f"{model}.toml"
    config.write_text(f'[retrievers.dense]\nmodel = "{model}"\nthreads = {threads}\n')
    out = work / f"{directory.parent.name}-{model}.json"
    command = ["beir", str(directory), "--retriever", "dense", "--config", str(config)]
    subprocess.run(
        [str(CLI), *command, "--json", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=work,
    )
    summary = json.loads(out.read_text())
    return {"ndcg@10": summary["ndcg@10"], "recall@100": summary["recall@100"]}


def passages(directory: Path, count: int) -> list[str]:
    texts: list[str] = []
    with (directory / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            texts.append(f"{doc.get('title', '')}\n{doc['text']}".strip())
            if len(texts) == count:
                break
    return texts


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.iterdir() if path.is_file())


def throughput(
    texts: list[str], threads: int, rounds: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Median texts per CPU-second per model, and the median per-round ratio to the default."""
    default_dir = default_model_dir(Path.home())
    functions = {
        name: MiniLMEmbedding(model_folder(default_dir, spec), intra_op_threads=threads, model=name)
        for name, spec in MODELS.items()
    }
    for function in functions.values():
        function.embed(texts[:8])  # open the session / engine outside the timing
    rates: dict[str, list[float]] = {name: [] for name in functions}
    ratios: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(rounds):
        this_round: dict[str, float] = {}
        for name, function in functions.items():
            start = time.process_time()
            function.embed(texts)
            this_round[name] = len(texts) / (time.process_time() - start)
            rates[name].append(this_round[name])
        for name in functions:
            ratios[name].append(this_round[name] / this_round[DEFAULT_MODEL])
    return (
        {name: statistics.median(values) for name, values in rates.items()},
        {name: statistics.median(values) for name, values in ratios.items()},
    )


def _name(directory: Path) -> str:
    return directory.parent.name if directory.name == "beir" else directory.name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--beir", type=Path, action="append", required=True, help="BEIR folder")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1, help="quality runs side by side")
    parser.add_argument("--texts", type=int, default=400, help="passages timed per round")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "model-comparison.md")
    parser.add_argument("--command", default="", help="the command line to print in --out")
    args = parser.parse_args()

    default_dir = default_model_dir(Path.home())
    results: dict[str, dict[str, dict[str, float]]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="bench-models-") as work,
        ThreadPoolExecutor(max_workers=args.jobs) as pool,
    ):
        # The quality runs are processes of their own, started first: on a shared machine
        # running them side by side (--jobs) gets them more of the cores, and changes no
        # score. The throughput rounds run here meanwhile, in this process's CPU time.
        futures = {
            (_name(directory), model): pool.submit(
                quality, directory, model, args.threads, Path(work)
            )
            for directory in args.beir
            for model in MODELS
        }
        rates, ratios = throughput(passages(args.beir[0], args.texts), args.threads, args.rounds)
        for (name, model), future in futures.items():
            results.setdefault(name, {})[model] = future.result()
            print(f"{name} {model}: {json.dumps(results[name][model])}", file=sys.stderr)

    header = ["model"]
    for dataset in results:
        header += [f"{dataset} NDCG@10", f"{dataset} Recall@100"]
    header += ["texts/s (CPU)", "× all-MiniLM-L6-v2", "size (MB)"]
    rows = [header, ["---"] * len(header)]
    for model, spec in MODELS.items():
        row = [f"`{model}`"]
        for dataset in results:
            row += [f"{results[dataset][model][m]:.4f}" for m in ("ndcg@10", "recall@100")]
        size = folder_bytes(model_folder(default_dir, spec)) / 1e6
        row += [f"{rates[model]:.1f}", f"{ratios[model]:.2f}", f"{size:.0f}"]
        rows.append(row)
    table = "\n".join("| " + " | ".join(row) + " |" for row in rows)
    command = args.command or " ".join(["bench/bench_models.py", *sys.argv[1:]])
    throughput_note = (
        f"Throughput: {args.texts} passages of the first folder, {args.threads} thread(s), "
        f"median of {args.rounds} interleaved rounds; the ratio is the median of the "
        "per-round ratios."
    )
    args.out.write_text(
        TEMPLATE.format(command=command, table=table, throughput=throughput_note),
        encoding="utf-8",
    )
    print(table)
    return 0


TEMPLATE = """# Embedding models compared

Every model `[retrievers.dense] model = NAME` can name (`retrieval-eval model list`),
each through `retrieval-eval beir DIR --retriever dense` with the rest of the dense
settings at their defaults. Generated by one command (the BEIR folders are
Cranfield's and Vaswani's, converted to BEIR's layout; the repository does not ship
them):

```sh
{command}
```

{table}

{throughput} Texts per CPU-second counts every thread of the process, so a loaded
machine changes it less than wall time; the ratio against all-MiniLM-L6-v2 in the same
round is the figure to compare. Size is the installed model folder.

What the models are, where their weights come from and how each is checked against
its reference: docs/model.md ("Other models").
"""


if __name__ == "__main__":
    raise SystemExit(main())
