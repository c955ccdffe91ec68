import { request } from 'node:http';
import type { WireFormat } from '../../proxy/call.js';
import { edgePath, keyHeaders } from './edge-calls.js';

/** One call of the steady traffic, as its client saw it. */
export interface Outcome {
  format: WireFormat;
  stream: boolean;
  /** The proxy it was sent to (a URL). */
  target: string;
  /** The answer's status, or 0 when no answer came (connection refused or reset before the head). */
  status: number;
  requestId: string | undefined;
  /** The whole answer arrived: a non-streamed body that parses, or a stream through its last event. */
  complete: boolean;
  /** Milliseconds since the traffic started, when the call was sent and when it ended. */
  sentAt: number;
  endedAt: number;
  /** The transport error or the error body's first characters, for a failure message. */
  detail?: string;
}

export interface TrafficOptions {
  /** The proxy each call goes to (asked per call: a test may move traffic away from a proxy). */
  target(n: number): string;
  slug: string;
  secret: string;
  /** Calls in flight at once. */
  workers?: number;
  /** Pause between one worker's calls. */
  pauseMs?: number;
  maxTokens?: number;
}

export interface Traffic {
  readonly outcomes: Outcome[];
  /** When it started (epoch ms): `sentAt` and `endedAt` count from here. */
  readonly startedAt: number;
  /** Stops sending and resolves once every call in flight has ended. */
  stop(): Promise<Outcome[]>;
}

const CALL_TIMEOUT_MS = 30_000;

/**
 * Steady traffic on both wire formats, streamed and not, in turn: every call
 * is recorded with its status and request id, so a test can hold each served
 * call against the ledger. Each call opens its own connection (no keep-alive):
 * a connection is then never reused across a restart, and what a client sees
 * is the proxy's answer, not a stale socket's.
 */
export function startTraffic(options: TrafficOptions): Traffic {
  const outcomes: Outcome[] = [];
  const t0 = Date.now();
  let running = true;
  let n = 0;

  async function worker(): Promise<void> {
    while (running) {
      const i = n++;
      const format: WireFormat = i % 2 === 0 ? 'chat' : 'messages';
      const stream = i % 4 >= 2;
      outcomes.push(await oneCall(options.target(i), format, stream, i));
      if (options.pauseMs) await new Promise((r) => setTimeout(r, options.pauseMs));
    }
  }

  function oneCall(target: string, format: WireFormat, stream: boolean, i: number): Promise<Outcome> {
    const body = JSON.stringify({
      model: 'tg/sonnet',
      max_tokens: options.maxTokens ?? 50,
      stream,
      messages: [{ role: 'user', content: `Steady call ${i}.` }],
    });
    const headers = { ...keyHeaders(format, options.secret), 'content-length': String(Buffer.byteLength(body)) };
    const sentAt = Date.now() - t0;
    return new Promise((resolve) => {
      const done = (o: Omit<Outcome, 'format' | 'stream' | 'target' | 'sentAt' | 'endedAt'>) =>
        resolve({ format, stream, target, sentAt, endedAt: Date.now() - t0, ...o });
      const req = request(
        `${target}${edgePath(format, options.slug)}`,
        { method: 'POST', headers, agent: false, timeout: CALL_TIMEOUT_MS },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('error', (err) =>
            done({ status: res.statusCode ?? 0, requestId: header(res.headers['x-request-id']), complete: false, detail: err.message }),
          );
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            const complete = status === 200 && (stream ? streamEnded(format, text) : parses(text));
            done({ status, requestId: header(res.headers['x-request-id']), complete, detail: status === 200 ? undefined : text.slice(0, 200) });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (err) => done({ status: 0, requestId: undefined, complete: false, detail: err.message }));
      req.end(body);
    });
  }

  const workers = Array.from({ length: options.workers ?? 3 }, () => worker());
  return {
    outcomes,
    startedAt: t0,
    async stop() {
      running = false;
      await Promise.all(workers);
      return outcomes;
    },
  };
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** What each format's stream ends with. A Record, so a new format does not compile until its end is written. */
const STREAM_END: Record<WireFormat, string> = {
  chat: 'data: [DONE]',
  messages: 'event: message_stop',
  responses: 'event: response.completed',
  gemini: '"finishReason"',
};

function streamEnded(format: WireFormat, text: string): boolean {
  return text.includes(STREAM_END[format]);
}

/** Outcomes grouped by status (0: no answer), for a failure message. */
export function tally(outcomes: Outcome[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of outcomes) out[o.status] = (out[o.status] ?? 0) + 1;
  return out;
}
