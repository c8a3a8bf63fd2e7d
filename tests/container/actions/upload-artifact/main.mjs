// The upload half of the act stand-ins for actions/upload-artifact@v4 (see action.yml).
// As v4 does: every file under the given paths, relative to their least common ancestor,
// hidden files left out unless asked for, zipped and uploaded by @actions/artifact.
import fs from "node:fs";
import path from "node:path";

import { DefaultArtifactClient } from "@actions/artifact";
import * as core from "@actions/core";

const WILDCARD = /[*?[\]{}]/;

function isHidden(name) {
  return name.startsWith(".");
}

/** Every regular file at or under `start`, hidden ones only when `includeHidden`. */
function filesUnder(start, includeHidden) {
  if (!includeHidden && isHidden(path.basename(start))) return [];
  const stat = fs.statSync(start, { throwIfNoEntry: false });
  if (stat === undefined) return [];
  if (stat.isFile()) return [start];
  if (!stat.isDirectory()) return [];
  return fs
    .readdirSync(start)
    .sort()
    .flatMap((name) => filesUnder(path.join(start, name), includeHidden));
}

/** v4's root: the folder itself for one folder, else the least common ancestor. */
function rootOf(searchPaths) {
  if (searchPaths.length === 1) {
    const only = searchPaths[0];
    const stat = fs.statSync(only, { throwIfNoEntry: false });
    return stat?.isDirectory() ? only : path.dirname(only);
  }
  let common = path.dirname(searchPaths[0]).split(path.sep);
  for (const other of searchPaths.slice(1)) {
    const parts = path.dirname(other).split(path.sep);
    let i = 0;
    while (i < common.length && i < parts.length && common[i] === parts[i]) i += 1;
    common = common.slice(0, i);
  }
  return common.join(path.sep) || path.sep;
}

async function main() {
  const name = core.getInput("name") || "artifact";
  const entries = core.getMultilineInput("path", { required: true });
  const ifNoFilesFound = core.getInput("if-no-files-found") || "warn";
  const includeHidden = core.getBooleanInput("include-hidden-files");
  const retentionDays = Number.parseInt(core.getInput("retention-days") || "0", 10);
  const compressionLevel = Number.parseInt(core.getInput("compression-level") || "6", 10);
  if (!["warn", "error", "ignore"].includes(ifNoFilesFound)) {
    throw new Error(`if-no-files-found: '${ifNoFilesFound}' is not warn, error or ignore`);
  }
  const workspace = process.env.GITHUB_WORKSPACE || process.cwd();
  const searchPaths = entries.map((entry) => {
    if (entry.startsWith("!") || WILDCARD.test(entry)) {
      throw new Error(`path: '${entry}': this stand-in takes plain paths, not patterns`);
    }
    return path.resolve(workspace, entry);
  });
  const files = searchPaths.flatMap((start) => filesUnder(start, includeHidden));
  if (files.length === 0) {
    const message = `No files were found with the provided path: ${entries.join(", ")}. No artifacts will be uploaded.`;
    if (ifNoFilesFound === "error") throw new Error(message);
    if (ifNoFilesFound === "warn") core.warning(message);
    else core.info(message);
    return;
  }
  const root = rootOf(searchPaths);
  core.info(`With the provided path, there will be ${files.length} files uploaded from ${root}`);
  const client = new DefaultArtifactClient();
  const options = { compressionLevel };
  if (retentionDays > 0) options.retentionDays = retentionDays;
  const { id, size, digest } = await client.uploadArtifact(name, files, root, options);
  core.info(`Artifact ${name} uploaded: id ${id}, ${size} bytes`);
  core.setOutput("artifact-id", String(id));
  if (digest) core.setOutput("artifact-digest", digest);
}

main().catch((error) => core.setFailed(error instanceof Error ? error.message : String(error)));
