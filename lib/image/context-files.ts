/** Finding and reading the build context `RuntimeImage` wrote at synth. */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { IMAGE_JSON, type ImageJson, checkImageJson, sha256Hex } from './build-context.js';
import type { LayerEntry } from './layer.js';

export interface BuildContext {
  readonly dir: string;
  readonly image: ImageJson;
  readonly entries: LayerEntry[];
}

/** Reads image.json and the layer files, refusing files that changed since synth. */
export function readBuildContext(dir: string): BuildContext {
  const path = join(dir, IMAGE_JSON);
  if (!existsSync(path))
    throw new Error(`${dir} has no ${IMAGE_JSON}. Fix: run synth first (the RuntimeImage construct writes it)`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`${path} is not JSON (${(e as Error).message}). Fix: re-run synth`, { cause: e });
  }
  const image = checkImageJson(raw, path);
  const entries = image.files.map((f) => {
    const file = join(dir, f.source);
    if (!existsSync(file)) throw new Error(`${file} is missing (listed in ${path}). Fix: re-run synth`);
    const content = readFileSync(file);
    if (sha256Hex(content) !== f.sha256) {
      throw new Error(
        `${file} changed since synth (sha256 ${sha256Hex(content)}, image.json says ${f.sha256}). Fix: re-run synth`,
      );
    }
    return { path: f.path, content, mode: f.mode };
  });
  return { dir, image, entries };
}

/**
 * The context folders under a synth output folder: the folder itself when it holds
 * image.json, else every `image.json` up to four levels down (`<outdir>/runtime-image/context`).
 */
export function findBuildContexts(root: string): string[] {
  if (!existsSync(root) || !statSync(root).isDirectory())
    throw new Error(`${root} is not a folder. Fix: pass the synth output folder (e.g. cdk8s.out)`);
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    if (existsSync(join(dir, IMAGE_JSON))) {
      found.push(dir);
      return;
    }
    if (depth === 0) return;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory() && entry.name !== 'node_modules') walk(join(dir, entry.name), depth - 1);
    }
  };
  walk(root, 4);
  if (found.length === 0)
    throw new Error(
      `no ${IMAGE_JSON} under ${root}. Fix: synth an app with a RuntimeImage, and pass its output folder`,
    );
  return found;
}
