/**
 * The status page's static files (HTML, CSS, plain JavaScript: no framework, nothing fetched from
 * elsewhere). They live in clc/status/assets/ in the source tree; tsc does not copy them into
 * dist/, so a CLC run from dist/clc/status/ reads them from the source tree beside dist/ (the repo
 * is installed whole: bin/ferry-clc runs dist/ from it). Read once at start: a missing file stops
 * the CLC then, not a page load later, and no request ever names a path on disk.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface StatusAsset {
  readonly body: Buffer;
  readonly contentType: string;
}

/** Every file the page serves, by the name it is served under (/status/assets/NAME). */
export const ASSET_TYPES: Readonly<Record<string, string>> = Object.freeze({
  'index.html': 'text/html; charset=utf-8',
  'login.html': 'text/html; charset=utf-8',
  'status.css': 'text/css; charset=utf-8',
  'status.js': 'text/javascript; charset=utf-8',
  'login.js': 'text/javascript; charset=utf-8',
});

/** clc/status/assets from this module, whether it runs from the source tree or from dist/. */
export function assetDir(moduleUrl: string = import.meta.url): string {
  const here = dirname(fileURLToPath(moduleUrl));
  const beside = join(here, 'assets');
  if (existsSync(beside)) return beside;
  // dist/clc/status → the source tree's clc/status/assets (tsconfig's rootDir is the repo).
  return resolve(here, '..', '..', '..', 'clc', 'status', 'assets');
}

export function loadStatusAssets(dir: string = assetDir()): ReadonlyMap<string, StatusAsset> {
  const out = new Map<string, StatusAsset>();
  for (const [name, contentType] of Object.entries(ASSET_TYPES)) {
    out.set(name, Object.freeze({ body: readFileSync(join(dir, name)), contentType }));
  }
  return out;
}
