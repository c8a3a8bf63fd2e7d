#!/usr/bin/env bash
# The two reports behind docs/img/pr-comment.png and pr-comment-failing.png, from real runs
# of this repository's datasets in a scratch copy (the repository itself is not touched):
#
#   bash scripts/screenshot/make_reports.sh OUT_DIR
#
# 1. three passing runs, each recorded in retrieval-eval-history.jsonl as the Action records
#    a push to the default branch (so the comment has sparklines to draw);
# 2. a fourth passing run: OUT_DIR/pass/report.json;
# 3. four notes that only semantic.jsonl asks about are rewritten into an errand list, as a
#    careless pull request might, and the run is repeated: OUT_DIR/fail/report.json.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:?usage: make_reports.sh OUT_DIR}" && cd "$1" && pwd)
cli=$repo/.venv/bin/retrieval-eval
python=$repo/.venv/bin/python
work=$(mktemp -d "${TMPDIR:-/tmp}/retrieval-eval-shots.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -r "$repo/datasets" "$repo/retrieval-eval.toml" "$repo/baseline.json" "$work/"
commit=$(git -C "$repo" rev-parse HEAD)
cd "$work"

record() { # appends the last run's numbers to the history, as the Action does on a push
  "$python" - "$commit" <<'PY'
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from retrieval_eval.compare.history import append_history

report = json.loads(Path("retrieval-eval-report/report.json").read_text(encoding="utf-8"))
numbers = {d["name"]: {r["metric"]: r["current"] for r in d["rows"]} for d in report["datasets"]}
append_history(
    Path("retrieval-eval-history.jsonl"),
    commit=sys.argv[1],
    date=datetime.now(UTC),
    aggregates=numbers,
)
PY
}

for run in 1 2 3; do
  echo "make_reports: recorded run $run"
  "$cli" run >/dev/null
  record
done
echo "make_reports: passing run"
"$cli" run >/dev/null
rm -rf "$out/pass" && cp -r retrieval-eval-report "$out/pass"
for note in software/python-async-pitfalls software/flaky-tests books/sapiens recipes/sourdough-starter; do
  file="datasets/corpus/$note.md"
  # Keep the front matter (the tags the datasets filter on); replace the text.
  awk 'NR == 1 && /^---$/ { inside = 1; print; next } inside { print } inside && /^---$/ { exit }' \
    "$file" >"$file.new"
  printf '# Weekend\n\nErrands for the weekend: laundry, groceries, call the plumber.\n' >>"$file.new"
  mv "$file.new" "$file"
done
echo "make_reports: failing run"
"$cli" run >/dev/null || true # exit 1: the gate failed, which is the point
rm -rf "$out/fail" && cp -r retrieval-eval-report "$out/fail"
echo "make_reports: $out/pass/report.json and $out/fail/report.json"
