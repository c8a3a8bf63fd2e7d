// The download half of the act stand-ins for actions/download-artifact@v4 (see
// action.yml). As v4 does: `name` extracts one artifact into `path`; otherwise every
// artifact of the run whose name matches `pattern` goes to `path/<name>/`, or into `path`
// itself with `merge-multiple`.
import path from "node:path";

import { DefaultArtifactClient } from "@actions/artifact";
import * as core from "@actions/core";

/** The glob `pattern` (`*`, `?`) as an anchored regular expression over whole names. */
function nameMatcher(pattern) {
  const body = [...pattern]
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[\\^$.|+()[\]{}]/g, "\\$&")))
    .join("");
  return new RegExp(`^${body}$`);
}

async function main() {
  const name = core.getInput("name");
  const pattern = core.getInput("pattern");
  const mergeMultiple = core.getBooleanInput("merge-multiple");
  const workspace = process.env.GITHUB_WORKSPACE || process.cwd();
  const destination = path.resolve(workspace, core.getInput("path") || ".");
  const client = new DefaultArtifactClient();

  if (name) {
    if (pattern) core.warning("pattern is ignored when name is given");
    const { artifact } = await client.getArtifact(name);
    await client.downloadArtifact(artifact.id, { path: destination });
    core.info(`Artifact ${name} downloaded to ${destination}`);
  } else {
    const matches = nameMatcher(pattern || "*");
    const { artifacts } = await client.listArtifacts({ latest: true });
    const chosen = artifacts.filter((artifact) => matches.test(artifact.name));
    core.info(`Found ${chosen.length} artifact(s) matching '${pattern || "*"}'`);
    for (const artifact of chosen) {
      const target = mergeMultiple ? destination : path.join(destination, artifact.name);
      await client.downloadArtifact(artifact.id, { path: target });
      core.info(`Artifact ${artifact.name} downloaded to ${target}`);
    }
  }
  core.setOutput("download-path", destination);
}

main().catch((error) => core.setFailed(error instanceof Error ? error.message : String(error)));
