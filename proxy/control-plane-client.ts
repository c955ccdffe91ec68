import { Pool, type Dispatcher } from 'undici';
import { z } from 'zod';
import { changePageSchema, changeVersionSchema } from '../shared/contract/changes.js';
import { keyResolutionSchema, type KeyResolution } from '../shared/contract/keys.js';
import { keyMoneyAnswerSchema, type KeyMoney } from '../shared/contract/money.js';
import type { DeploymentReport } from '../shared/contract/deployments.js';
import { USAGE_ANSWER_PER_KEY, usageAnswerSchema, usageKeysAnswerSchema, type UsageKeyMoney } from '../shared/contract/usage.js';

export class ControlPlaneUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ControlPlaneUnavailable';
  }
}

/**
 * Reads one message of the wire contract. An answer that is not what the
 * contract says (a control plane of another version, a proxy in between
 * answering HTML) is treated like no answer at all: the caller's fallbacks
 * (stale keys, retried reports) apply instead of a crash.
 */
export function parseAnswer<S extends z.ZodType>(schema: S, text: string, what: string): z.infer<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ControlPlaneUnavailable(`control plane answered ${what} with something other than JSON`, { cause: err });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ControlPlaneUnavailable(
      `control plane answer to ${what} breaks the contract at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
    );
  }
  return parsed.data;
}

/** A usage report as the proxy sends it: its JSON text, made once at settlement, with the ids the answer is read by. */
export interface ReportText {
  json: string;
  requestId: string;
  keyId: string;
}

/** Either answer to a usage report: per key (asked for), or per report (a control plane from before the per-key answer). */
const usageEitherAnswerSchema = z.union([usageKeysAnswerSchema, usageAnswerSchema]);

/**
 * Each known key's money after the batch, from either answer. One per
 * report is read by position, as that answer was always meant: a report's
 * result without a workspace is a key the control plane does not know.
 */
function keysOf(answer: z.infer<typeof usageEitherAnswerSchema>, reports: readonly ReportText[]): UsageKeyMoney[] {
  if ('keys' in answer) return answer.keys;
  const keys = new Map<string, UsageKeyMoney>();
  answer.results.forEach((r, i) => {
    const keyId = reports[i]?.keyId;
    if (keyId === undefined || r.workspace_id === null) return;
    const { workspace_id, balance_micros, balance_version, key_remaining_micros, key_version } = r;
    keys.set(keyId, { key_id: keyId, workspace_id, balance_micros, balance_version, key_remaining_micros, key_version });
  });
  return [...keys.values()];
}

const BATCH_HEAD = '{"reports":[';
const BATCH_TAIL = ']}';

/**
 * A usage batch's body written straight into one buffer from its reports'
 * text: a string of 400 KB built by concatenation, then copied out as UTF-8,
 * cost several times this (measured 2-5 ms against 0.2 ms per 1,000 reports),
 * most of it page faults on fresh large objects.
 */
function usageBody(reports: readonly ReportText[]): Buffer {
  let bytes = BATCH_HEAD.length + BATCH_TAIL.length + Math.max(0, reports.length - 1);
  for (const r of reports) bytes += Buffer.byteLength(r.json);
  const body = Buffer.allocUnsafe(bytes);
  let at = body.write(BATCH_HEAD, 0, 'latin1');
  for (let i = 0; i < reports.length; i++) {
    if (i > 0) at += body.write(',', at, 'latin1');
    at += body.write(reports[i]!.json, at);
  }
  body.write(BATCH_TAIL, at, 'latin1');
  return body;
}

/**
 * The proxy's client of /internal, authenticated with DATA_PLANE_TOKEN. Every
 * answer is checked against the wire contract; that costs a parse per key
 * cache miss, per usage batch and per change event, never per proxied call.
 */
/** Function properties: the settlement watch wraps them one by one, taken off the object. */
export interface ControlPlaneClient {
  resolveKey: (keyHash: string) => Promise<KeyResolution>;
  /**
   * Sends reports already serialized (their text joined, not serialized
   * again); answers each known key's money after the batch, once per key.
   */
  reportUsage: (reports: readonly ReportText[]) => Promise<UsageKeyMoney[]>;
  /** A key's money as committed now (founding a hold account Redis lost); null for a key it does not know. */
  keyMoney: (keyId: string) => Promise<KeyMoney | null>;
  /** The state of the deployments this proxy routes to, for the console's model page. */
  reportDeployments: (report: DeploymentReport) => Promise<void>;
  changesAfter: (after: number) => Promise<ChangePage>;
  version: () => Promise<number>;
  /** Opens the push stream; the caller owns the returned body. */
  openChangeStream: (signal: AbortSignal) => Promise<Dispatcher.ResponseData['body']>;
  close: () => Promise<void>;
}

type ChangePage = z.infer<typeof changePageSchema>;

export function createControlPlaneClient(baseUrl: string, token: string): ControlPlaneClient {
  const url = new URL(baseUrl);
  const pool = new Pool(url.origin, { connect: { timeout: 1_000 }, headersTimeout: 5_000, bodyTimeout: 5_000 });
  const pathBase = url.pathname.replace(/\/+$/, '');
  const auth = `Bearer ${token}`;

  /** An answer's text, once the status says it is one; throws as the callers' fallbacks expect. */
  async function send(method: 'GET' | 'POST', path: string, body?: string | Buffer): Promise<string> {
    let res;
    try {
      res = await pool.request({
        method,
        path: `${pathBase}${path}`,
        headers: body === undefined ? { authorization: auth } : { authorization: auth, 'content-type': 'application/json' },
        body,
      });
    } catch (err) {
      throw new ControlPlaneUnavailable(`control plane unreachable: ${(err as Error).message}`, { cause: err });
    }
    const text = await res.body.text().catch((err: unknown) => {
      throw new ControlPlaneUnavailable(`control plane answer cut short: ${(err as Error).message}`, { cause: err });
    });
    if (res.statusCode >= 500 || res.statusCode === 401) {
      throw new ControlPlaneUnavailable(`control plane answered ${res.statusCode} to ${method} ${path}`);
    }
    if (res.statusCode >= 400) throw new Error(`control plane refused ${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
    return text;
  }

  async function json<S extends z.ZodType>(schema: S, method: 'GET' | 'POST', path: string, body?: string | Buffer): Promise<z.infer<S>> {
    return parseAnswer(schema, await send(method, path, body), `${method} ${path}`);
  }

  return {
    resolveKey: (keyHash: string) => json(keyResolutionSchema, 'GET', `/internal/keys/${keyHash}`),
    async reportUsage(reports: readonly ReportText[]) {
      const answer = await json(usageEitherAnswerSchema, 'POST', `/internal/usage?answer=${USAGE_ANSWER_PER_KEY}`, usageBody(reports));
      return keysOf(answer, reports);
    },
    keyMoney: async (keyId: string) => (await json(keyMoneyAnswerSchema, 'GET', `/internal/money/${keyId}`)).money,
    reportDeployments: async (report: DeploymentReport) => void (await send('POST', '/internal/deployments/health', JSON.stringify(report))),
    changesAfter: (after: number) => json(changePageSchema, 'GET', `/internal/changes?after=${after}`),
    version: async () => (await json(changeVersionSchema, 'GET', '/internal/changes/version')).version,
    async openChangeStream(signal: AbortSignal) {
      const res = await pool.request({
        method: 'GET',
        path: `${pathBase}/internal/changes/stream`,
        headers: { authorization: auth, accept: 'text/event-stream' },
        signal,
        headersTimeout: 5_000,
        // The stream sends a heartbeat every 15 s; silence longer than this means it is dead.
        bodyTimeout: 45_000,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new ControlPlaneUnavailable(`change stream answered ${res.statusCode}`);
      }
      return res.body;
    },
    close: () => pool.close(),
  };
}
