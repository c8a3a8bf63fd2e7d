"""How often `retrieval-eval generate`'s queries find their source document, on Cranfield.

No live API here: the query writer is the extractive stand-in the tests use
(tests/author/fake_writer.py: keyword styles take the document's rare terms, paraphrase
styles every other word of its first sentence without them), served by the loopback
Messages API. The figures therefore measure generate's own parts (document choice,
rare terms, the copy check and the top-100 check), not Claude's writing.

    .venv/bin/python bench/bench_generate.py [--per-file 40] [--retrievers bm25,dense]

Prints, per dataset file and retriever, HitRate@10 and MRR@10 of the kept fixtures
(from a real `retrieval-eval run`), plus kept / flagged / regenerated counts.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.cranfield_data import cranfield_beir  # noqa: E402
from tests.author.fake_writer import writer  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic  # noqa: E402

CLI = str(Path(sys.executable).with_name("retrieval-eval"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-file", type=int, default=40)
    parser.add_argument("--retrievers", default="bm25,dense")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(responder=writer()) as fake:
        project = Path(tmp)
        shutil.copytree(cranfield_beir(), project / "cranfield")
        env = {
            "ANTHROPIC_API_KEY": fake.api_key,
            "ANTHROPIC_BASE_URL": fake.base_url,
            "PATH": "/usr/bin:/bin",
            "HOME": str(Path.home()),
        }
        generated = subprocess.run(
            [
                CLI,
                "generate",
                "--corpus",
                "cranfield",
                "--per-file",
                str(args.per_file),
                "--types",
                "keyword,semantic",
                "--check-with",
                args.retrievers,
            ],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        print(generated.stdout.strip())
        for retriever in args.retrievers.split(","):
            config = project / f"{retriever}.toml"
            config.write_text(
                'corpus = "cranfield"\nmeasures = ["hit_rate@10", "mrr@10"]\n'
                'min_fixtures = 0\nmin_human = 0\n[thresholds]\n"ndcg@10" = false\n'
                '"p@5" = false\n"mrr@10" = false\n'
                f'[dataset_retrievers]\n"semantic.jsonl" = "{retriever}"\n'
                f'"keyword.jsonl" = "{retriever}"\n'
            )
            ran = subprocess.run(
                [
                    CLI,
                    "run",
                    "--config",
                    str(config),
                    "--baseline",
                    f"{retriever}.json",
                    "--report-dir",
                    f"report-{retriever}",
                    "--quiet",
                ],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if ran.returncode == 2:
                sys.exit(ran.stderr)
            report = json.loads((project / f"report-{retriever}" / "report.json").read_text())
            for dataset in report["datasets"]:
                values = {k: v["value"] for k, v in dataset["aggregates"].items()}
                print(
                    f"{retriever:6} {dataset['name']:15} n={dataset['num_queries']:3} "
                    f"HitRate@10 {values['hit_rate@10']:.3f}  MRR@10 {values['mrr@10']:.3f}"
                )


if __name__ == "__main__":
    main()
