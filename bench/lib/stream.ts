import { join } from 'node:path';
import type { StreamResult, StreamSpec } from '../load/stream-client.js';
import { runChild } from './load.js';
import { nodeArgs, REPO_ROOT } from './procs.js';

export async function runStreams(spec: StreamSpec, cpus: string | undefined): Promise<StreamResult> {
  const [node, args] = nodeArgs(join(REPO_ROOT, 'bench/load/stream-client.ts'), [JSON.stringify(spec)]);
  return JSON.parse(await runChild(node, args, cpus, 'BENCH_RESULT', (spec.durationS + 60) * 1000)) as StreamResult;
}
