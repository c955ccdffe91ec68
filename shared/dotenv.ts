import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

/**
 * Reads `.env` from the working directory into `env`, as docker compose does,
 * so `npm start` and the CLI see the same settings as the compose stack. A
 * variable already set in the real environment wins over the file. Returns
 * the names taken from the file (empty when there is no file).
 */
export function loadDotEnv(env: NodeJS.ProcessEnv, path = '.env'): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const taken: string[] = [];
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    taken.push(name);
  }
  return taken;
}
