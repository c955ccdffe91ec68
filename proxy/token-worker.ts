import { parentPort } from 'node:worker_threads';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countWithinBudget } from './token-estimate.js';

/**
 * The counting worker (started by token-counter.ts). Loading o200k_base
 * builds ~2 MB of tables synchronously (~450 ms measured) and counting is
 * CPU-bound: both happen here, off the proxy's event loop.
 */

export interface CountJob {
  id: number;
  texts: string[];
  budgetMs: number;
}

export interface CountAnswer {
  id: number;
  tokens: number;
}

parentPort?.on('message', (job: CountJob) => {
  const answer: CountAnswer = { id: job.id, tokens: countWithinBudget(job.texts, countTokens, job.budgetMs) };
  parentPort?.postMessage(answer);
});
