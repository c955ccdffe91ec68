/**
 * A settled call's usage record as JSON text: its report serialized once, at
 * settlement, and the same text both written to the outbox (inside the
 * record's line) and sent to the control plane.
 */
import type { UsageReport } from '../../shared/contract/usage.js';

/** What the outbox keeps of a settled call: the report, and where its hold lives (to re-hold it after a restart). */
export interface OutboxRecord {
  report: UsageReport;
  workspaceId: string;
  /** The key has a budget: its hold is also on the key's account. */
  keyBudget: boolean;
  /** A call not billed (recorded at no cost for the usage console): it holds nothing. */
  recordOnly?: boolean;
}

/**
 * A record as the outbox writes it: its report already serialized, once, at
 * settlement; the same text is sent to the control plane. A line on disk is
 * the record's JSON (`OutboxRecord`), so replay reads it back as before.
 */
export interface OutboxEntry {
  /** The usage report's JSON text. */
  json: string;
  workspaceId: string;
  keyBudget: boolean;
  recordOnly?: boolean;
  /** Refused calls (the report's `refusal_reason`): not a settlement, so not counted among those owed. Known from the report on replay. */
  refusal?: boolean;
}

/** Text JSON.stringify writes as it is (no quote, backslash, control character or surrogate): ids, names, digits. */
const PLAIN = /^[\w .:/@+-]*$/;

/**
 * A string as its JSON text: quoted as it is when it holds nothing
 * JSON.stringify would escape (every id and number a record carries),
 * else by JSON.stringify. A test costs a fraction of a generic stringify,
 * and a record has eight of these.
 */
function json(s: string): string {
  return typeof s === 'string' && PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/**
 * A usage report as its JSON text: the same text `JSON.stringify` makes,
 * written out for the shapes every settled call has (a billed call with its
 * cache split and exact cost, or a record-only one without them); a report
 * of any other shape (some optional field absent, a number not finite) goes
 * through `JSON.stringify`, so no field is ever lost on the way to disk.
 * The result is flat (one string, not a rope of its pieces): it lives until
 * the control plane has the report.
 */
export function reportJson(p: UsageReport): string {
  const usual =
    p.format !== undefined &&
    p.status !== undefined &&
    p.latency_ms !== undefined &&
    p.refusal_reason === undefined &&
    Number.isFinite(p.input_tokens + p.output_tokens + p.cost_micros + p.status + p.latency_ms + (p.started_at_ms ?? 0));
  const split = usual ? splitFields(p) : undefined;
  if (split === undefined) return JSON.stringify(p);
  return flat(
    `{"request_id":${json(p.request_id)},"key_id":${json(p.key_id)},"model":${json(p.model)},` +
      `"input_tokens":${p.input_tokens},"output_tokens":${p.output_tokens},"cost_micros":${p.cost_micros},` +
      `"format":${json(p.format!)},"status":${p.status},"latency_ms":${p.latency_ms}` +
      `${p.started_at_ms === undefined ? '' : `,"started_at_ms":${p.started_at_ms}`}` +
      `${p.deployment === undefined ? '' : `,"deployment":${json(p.deployment)}`}` +
      `${p.held_at_ms === undefined ? '' : `,"held_at_ms":${p.held_at_ms}`}${split}}`,
  );
}

/**
 * The string flattened: a string built by concatenation is a tree of its
 * pieces (dozens of heap objects for a report), and one that lives ~100 ms
 * is promoted and marked piece by piece. Converting it to a number makes V8
 * flatten it in place (the trick of the flatstr package); the pieces die young.
 */
function flat(s: string): string {
  void Number(s);
  return s;
}

const LINE_HEAD = '{"report":';

/** What follows a record's report in its line. */
function lineTail(e: OutboxEntry): string {
  return `,"workspaceId":${json(e.workspaceId)},"keyBudget":${e.keyBudget}${e.recordOnly ? ',"recordOnly":true' : ''}}\n`;
}

/** A record's line in a segment: `JSON.stringify(record)` and a newline, around its report's text as it is. */
export function entryLine(e: OutboxEntry): string {
  return `${LINE_HEAD}${e.json}${lineTail(e)}`;
}

/**
 * A batch's lines written straight into one buffer, never joined into one
 * string first: a string of a hundred kilobytes built by concatenation and
 * then copied out as UTF-8 costs several times this, most of it page faults
 * on fresh large objects.
 */
export function linesBuffer(entries: readonly OutboxEntry[]): Buffer {
  const tails = entries.map(lineTail);
  let bytes = entries.length * LINE_HEAD.length;
  for (let i = 0; i < entries.length; i++) bytes += Buffer.byteLength(entries[i]!.json) + Buffer.byteLength(tails[i]!);
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (let i = 0; i < entries.length; i++) {
    at += out.write(LINE_HEAD, at, 'latin1');
    at += out.write(entries[i]!.json, at);
    at += out.write(tails[i]!, at);
  }
  return out;
}

/** A record read back from disk (replay), or made in a test, as the outbox writes it. */
export function entryOf(r: OutboxRecord): OutboxEntry {
  return {
    json: reportJson(r.report),
    workspaceId: r.workspaceId,
    keyBudget: r.keyBudget,
    recordOnly: r.recordOnly === true,
    refusal: r.report.refusal_reason !== undefined,
  };
}

/** One record as its JSON line. */
export function recordLine(r: OutboxRecord): string {
  return entryLine(entryOf(r));
}

const SPLIT_KEYS = [
  'cache_read_tokens',
  'cache_write_tokens',
  'cache_write_1h_tokens',
  'web_search_requests',
  'cost_femtos',
  'cache_saved_femtos',
] as const;

/** The cache split and exact cost as JSON members (all six, or none); undefined for any other mix, which the generic serializer writes. */
function splitFields(p: UsageReport): string | undefined {
  let present = 0;
  for (const k of SPLIT_KEYS) if (p[k] !== undefined) present++;
  if (present === 0) return '';
  if (present !== SPLIT_KEYS.length) return undefined;
  const n = [p.cache_read_tokens!, p.cache_write_tokens!, p.cache_write_1h_tokens!, p.web_search_requests!];
  if (!Number.isFinite(n[0]! + n[1]! + n[2]! + n[3]!)) return undefined;
  return (
    `,"cache_read_tokens":${n[0]},"cache_write_tokens":${n[1]},"cache_write_1h_tokens":${n[2]},"web_search_requests":${n[3]},` +
    `"cost_femtos":${json(p.cost_femtos!)},"cache_saved_femtos":${json(p.cache_saved_femtos!)}`
  );
}
