import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface StaticFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Reads the console's files once at start-up. The set is small and fixed, so
 * lookups are a map hit: a request path can never name a file outside it.
 */
export function loadStaticFiles(dir: URL): Map<string, StaticFile> {
  const root = fileURLToPath(dir);
  const files = new Map<string, StaticFile>();
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) {
        walk(full);
        continue;
      }
      const contentType = CONTENT_TYPES[extname(entry.name)];
      if (!contentType) continue;
      const body = readFileSync(full);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      files.set(`/${relative(root, full).split(sep).join('/')}`, { body, contentType, etag });
    }
  };
  walk(root);
  return files;
}
