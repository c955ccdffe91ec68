import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BatchRequest, BatchResult } from '../load/batch-client.js';
import { runChild } from './load.js';
import { nodeArgs, REPO_ROOT } from './procs.js';

let files = 0;

/** Sends each request once over `connections` sockets from a pinned child process. */
export async function runBatch(
  dir: string,
  origin: string,
  requests: BatchRequest[],
  connections: number,
  cpus: string | undefined,
): Promise<BatchResult> {
  const requestsFile = join(dir, `batch-${++files}.json`);
  writeFileSync(requestsFile, JSON.stringify(requests));
  const [node, args] = nodeArgs(join(REPO_ROOT, 'bench/load/batch-client.ts'), [JSON.stringify({ origin, connections, requestsFile })]);
  return JSON.parse(await runChild(node, args, cpus, 'BENCH_RESULT', 300_000)) as BatchResult;
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
