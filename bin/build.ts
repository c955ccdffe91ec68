/**
 * `npm run build`: compiles the service to plain JavaScript in dist/, which
 * `npm start`, `npm run control-plane`, `npm run proxy` and `npm run cli`
 * run. In production no loader wraps the code: tsx's transform adds a
 * `__name` call to every named closure, paid per request on the hot path.
 *
 * `--if-stale` (the `pre*` hooks) builds only when a source file or the
 * compiler settings are newer than the last build, so a start after an edit
 * runs the edit and a start without one costs a directory walk. Type errors
 * are `npm run typecheck`'s job (and `npm test`'s): emitting without checking
 * takes a few seconds instead of a quarter minute. In an image built without
 * dev dependencies (no TypeScript) an existing dist/ is used as it is.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { packagePath } from '../shared/package-root.js';

const SOURCES = ['bin', 'control-plane', 'proxy', 'shared'];
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];
const DIST = packagePath('dist');
const STAMP = join(DIST, '.built');

function newestSource(): number {
  let newest = 0;
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const dir of SOURCES) walk(packagePath(dir));
  for (const file of SETTINGS) newest = Math.max(newest, statSync(packagePath(file)).mtimeMs);
  return newest;
}

function compiler(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

function build(): void {
  const tsc = compiler();
  if (!tsc) {
    if (existsSync(STAMP)) return;
    process.stderr.write('dist/ is missing and TypeScript is not installed: run `npm install` (with dev dependencies), then `npm run build`.\n');
    process.exit(1);
  }
  // Compile beside dist/ and swap it in whole: a process still running from
  // the old dist/ never sees a half-written tree, and deleted sources leave
  // no stale modules behind.
  const next = packagePath(`dist.building-${process.pid}`);
  rmSync(next, { recursive: true, force: true });
  const r = spawnSync(process.execPath, [tsc, '-p', packagePath('tsconfig.build.json'), '--noCheck', '--outDir', next], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0) {
    rmSync(next, { recursive: true, force: true });
    process.stderr.write('build failed\n');
    process.exit(1);
  }
  writeFileSync(join(next, '.built'), `${new Date().toISOString()}\n`);
  const old = packagePath(`dist.old-${process.pid}`);
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(next, DIST);
  rmSync(old, { recursive: true, force: true });
}

function stale(): boolean {
  if (!existsSync(STAMP)) return true;
  // An image shipped without its sources keeps the dist/ it was built with.
  if (!SOURCES.every((dir) => existsSync(packagePath(dir)))) return false;
  return newestSource() > statSync(STAMP).mtimeMs;
}

if (!process.argv.includes('--if-stale') || stale()) build();
