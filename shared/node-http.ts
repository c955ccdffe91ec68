import { createRequire } from 'node:module';
import type * as Http from 'node:http';

/**
 * `node:http` through `require`, not `import`. An ES module import of a
 * built-in builds its namespace by reading every export, and http's
 * `WebSocket`, `CloseEvent` and `MessageEvent` getters then load Node's own
 * bundled undici (745 KB of source; 1.5 MiB more resident in the proxy after
 * start, 11 MiB in a bare process) for global `fetch` and `WebSocket`, which
 * the proxy never uses (it forwards with the `undici` package). Code that
 * needs a value from node:http takes it from here (lint keeps it so);
 * type-only imports of node:http are erased and cost nothing.
 */
const http = createRequire(import.meta.url)('node:http') as typeof Http;

export const createServer: typeof Http.createServer = http.createServer;
export const STATUS_CODES: typeof Http.STATUS_CODES = http.STATUS_CODES;
