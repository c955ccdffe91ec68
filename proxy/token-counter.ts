import { Worker } from 'node:worker_threads';
import { estimateFromLength } from './token-estimate.js';
import type { CountAnswer, CountJob } from './token-worker.js';

/**
 * Counts tokens in a worker thread, so that neither loading the encoding nor
 * counting a multi-MiB body stops the proxy's event loop. The worker starts
 * on the first count and does not keep the process alive. Each job counts
 * exactly for up to `budgetMs` and estimates the rest from its length; a job
 * the worker has not answered within `deadlineMs` (a queue of huge counts, a
 * crashed worker) is answered from length alone.
 */

export interface TokenCounter {
  count(texts: string[]): Promise<number>;
  close(): Promise<void>;
}

export interface TokenCounterOptions {
  budgetMs: number;
  deadlineMs: number;
}

export const DEFAULT_TOKEN_COUNTER: TokenCounterOptions = { budgetMs: 100, deadlineMs: 5_000 };

/** The worker's file beside this one: .ts when run from source (tests, under tsx), .js once built. */
function workerUrl(): URL {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`./token-worker.${ext}`, import.meta.url);
}

export function createTokenCounter(options: TokenCounterOptions = DEFAULT_TOKEN_COUNTER): TokenCounter {
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, (tokens: number | undefined) => void>();

  const failAll = () => {
    for (const settle of waiting.values()) settle(undefined);
    waiting.clear();
    worker = undefined;
  };

  const start = (): Worker => {
    const w = new Worker(workerUrl());
    w.on('message', (a: CountAnswer) => waiting.get(a.id)?.(a.tokens));
    // A crashed worker answers nobody: its jobs fall back to length, the next count starts a new one.
    w.on('error', failAll);
    w.on('exit', () => {
      if (worker === w) failAll();
    });
    // After the listeners: adding a 'message' listener refs the worker again.
    w.unref();
    return w;
  };

  return {
    count(texts) {
      worker ??= start();
      const id = nextId++;
      const job: CountJob = { id, texts, budgetMs: options.budgetMs };
      return new Promise<number>((resolve) => {
        const timer = setTimeout(() => settle(undefined), options.deadlineMs);
        const settle = (tokens: number | undefined) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(tokens ?? estimateFromLength(texts));
        };
        waiting.set(id, settle);
        worker!.postMessage(job);
      });
    },
    async close() {
      const w = worker;
      worker = undefined;
      failAll();
      await w?.terminate();
    },
  };
}
