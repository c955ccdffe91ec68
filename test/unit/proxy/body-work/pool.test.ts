import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { AppError } from '../../../../shared/errors.js';
import { createBodyPool } from '../../../../proxy/body-work/pool.js';
import type { WorkJob } from '../../../../proxy/body-work/jobs.js';
import { testConfig } from '../../../support/control-plane.js';

const model = testConfig().models.models.get('tg/gpt-direct')!;
const HEADERS = { 'anthropic-version': '2023-06-01' };

/** A local count of `text`: BPE over one long base64 run is slow, so a large budget makes a job that runs for seconds. */
function countJob(text: string, budgetMs: number): WorkJob {
  const raw = Buffer.from(JSON.stringify({ model: 'tg/gpt-direct', messages: [{ role: 'user', content: text }] }));
  return { kind: 'count', format: 'messages', raw, headers: HEADERS, purpose: 'count', model, budgetMs };
}

const refusal = async (p: Promise<unknown>): Promise<AppError> => {
  try {
    await p;
  } catch (err) {
    return err as AppError;
  }
  throw new Error('the job was not refused');
};

/** The body workers' bounds (proxy/body-work/pool.ts): a full queue and a job past its deadline are 503s, and the pool goes on. */
describe('proxy body work: the worker pool', function () {
  this.timeout(60_000);

  it('a job past its deadline is a 503 and its worker is replaced: the next job is answered', async () => {
    // The deadline counts from dispatch, so a fresh worker's start and its tokenizer's load (~0.5 s idle,
    // past 1.5 s on a loaded machine) are inside it: 6 s leaves room for them, and the slow job runs far longer.
    const pool = createBodyPool({ threads: 1, queueMax: 8, deadlineMs: 6_000 });
    try {
      // Warm: the worker's start (and the tokenizer's tables) is not what the deadline is about.
      expect((await pool.run(countJob('hello', 100))).result).to.be.a('number');
      const late = await refusal(pool.run(countJob(randomBytes(3 * 1024 * 1024).toString('base64'), 60_000)));
      expect(late).to.be.instanceOf(AppError);
      expect(late.status).to.equal(503);
      const next = await pool.run(countJob('hello again', 100));
      expect(next.result).to.be.a('number');
      // The body moved to the worker comes back whole.
      expect(JSON.parse(next.raw.toString()).model).to.equal('tg/gpt-direct');
    } finally {
      await pool.close();
    }
  });

  it('past the queue bound a job is refused at once with 503 and retry-after; the queued ones are answered', async () => {
    const pool = createBodyPool({ threads: 1, queueMax: 2, deadlineMs: 30_000 });
    try {
      const jobs = [0, 1, 2].map((i) => pool.run(countJob(`job ${i}`, 100)));
      const refused = await refusal(pool.run(countJob('one too many', 100)));
      expect(refused.status).to.equal(503);
      expect(refused.headers['retry-after']).to.equal('1');
      for (const j of await Promise.all(jobs)) expect(j.result).to.be.a('number');
    } finally {
      await pool.close();
    }
  });

  it("a worker's refusal comes back as the same AppError", async () => {
    const pool = createBodyPool({ threads: 1, queueMax: 2, deadlineMs: 30_000 });
    try {
      const job: WorkJob = { kind: 'parse', format: 'messages', raw: Buffer.from('{"model":'), headers: HEADERS, purpose: 'call' };
      const err = await refusal(pool.run(job));
      expect(err).to.be.instanceOf(AppError);
      expect(err.status).to.equal(400);
      expect(err.message).to.equal('The request body is not valid JSON.');
    } finally {
      await pool.close();
    }
  });
});
