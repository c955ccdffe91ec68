import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory holding package.json, found by walking up from this module:
 * the same answer whether it runs from source (tsx, tests) or compiled to
 * dist/ (production), so files shipped beside the code (migrations, the
 * console's static files, the example models file) are found either way.
 */
function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PACKAGE_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** A path inside the package, e.g. `packagePath('migrations')`. */
export function packagePath(...parts: string[]): string {
  return join(PACKAGE_ROOT, ...parts);
}
