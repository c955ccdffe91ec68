import { randomUUID } from 'node:crypto';
import { isObject } from '../../../shared/json.js';
import type { Json } from './json.js';

/**
 * Compaction for a Responses client on a provider without the Responses API.
 *
 * Codex shrinks a long conversation by sending it with a `compaction_trigger`
 * item last; the Responses API answers with exactly one `compaction` item
 * whose `encrypted_content` only the provider can read, and Codex then sends
 * that item in place of everything it summarised. A Chat or Messages
 * provider has no such thing, so the proxy performs it: the trigger becomes
 * a request for a summary (without tools, so the model writes text), the
 * summary comes back as the one compaction item, its text carried in
 * `encrypted_content` under a prefix of ours, and when the item returns on a
 * later turn it is expanded back into the text the model reads.
 */

/** Marks a compaction item the proxy made; its rest is the summary, base64 (UTF-8). */
const PREFIX = 'tollgate.compaction.v1:';

/** What the model is asked to write when the client asks for a compaction: our own words. */
export const COMPACTION_PROMPT = [
  'Stop working on the task for a moment: the conversation above is about to be replaced by a summary you write now,',
  'and whoever continues (you, with only the summary) will not see anything else of it.',
  'Write that summary. Say what the user asked for and any constraints or preferences they gave; what has been done so far,',
  'with the files, commands and results that matter; the decisions taken and why; what is still open or failing;',
  'and the next concrete steps. Be brief and specific, keep exact names, paths and values, and do not call any tool.',
].join(' ');

/** Put before a summary when it returns, so the model reads it as the earlier conversation, not a new request. */
export const SUMMARY_INTRO = 'The conversation so far was compacted into this summary, written earlier in this session:\n\n';

/**
 * The request asks for a compaction: its last input item is a
 * `compaction_trigger`, where the API takes it. Only the last item is looked
 * at: this runs on every Responses call, and a long conversation's input
 * holds thousands of items.
 */
export function asksForCompaction(input: unknown): boolean {
  if (!Array.isArray(input) || input.length === 0) return false;
  const last: unknown = input[input.length - 1];
  return isObject(last) && last.type === 'compaction_trigger';
}

/** The one output item answering a compaction: the summary, readable by this proxy only in the sense that it wrote it. */
export function compactionItem(summary: string, id = `cmp_${randomUUID().replace(/-/g, '')}`): Json {
  return { id, type: 'compaction', encrypted_content: `${PREFIX}${Buffer.from(summary, 'utf8').toString('base64')}` };
}

/** The summary a compaction item made by this proxy holds; undefined for a provider's own (encrypted) item. */
export function summaryOf(item: Json): string | undefined {
  const content = item.encrypted_content;
  if (typeof content !== 'string' || !content.startsWith(PREFIX)) return undefined;
  return Buffer.from(content.slice(PREFIX.length), 'base64').toString('utf8');
}

/**
 * `POST …/responses/compact` (the endpoint older Codex versions call) as the
 * call it stands for: the same body with a `compaction_trigger` after its
 * input, unstreamed, so it is enforced, held, translated and billed as any
 * Responses call, and answered with the one compaction item (a Responses
 * provider's own, or this proxy's). A body that is not a JSON object is
 * left as it came for the format's checks to refuse in the client's dialect.
 */
export function asCompactionCall(raw: Buffer): Buffer {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return raw;
  }
  if (!isObject(body)) return raw;
  const given: unknown = body.input;
  const input: unknown[] = typeof given === 'string' ? [{ type: 'message', role: 'user', content: given }] : Array.isArray(given) ? given : [];
  return Buffer.from(JSON.stringify({ ...body, input: [...input, { type: 'compaction_trigger' }], stream: false }));
}
