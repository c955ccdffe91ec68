/**
 * The output ceiling follows the money (docs/proxy.md, "When the money does
 * not cover the worst case"): a call whose worst case does not fit what is
 * left is sent with the most output that fits, in the provider's own field.
 */
import type { ModelConfig } from '../../shared/models.js';
import type { ParsedCall } from '../call.js';
import type { UpstreamCall } from '../wire/index.js';
import { WIRE } from '../wire/registry.js';
import { costMicros, nanosPerToken } from './cost.js';

/** The dearest of `models` for `input` tokens in and `output` tokens out: what one hold must cover. */
export function worstCost(models: readonly ModelConfig[], input: number, output: (m: ModelConfig) => number): number {
  let worst = 0;
  for (const m of models) worst = Math.max(worst, costMicros(m, input, output(m)));
  return worst;
}

/** The most output tokens per choice whose cost on every one of `models` fits in `micros`. */
export function outputThatFits(models: readonly ModelConfig[], input: number, choices: number, micros: number): number {
  let fits = Infinity;
  for (const m of models) {
    const perToken = nanosPerToken(m.output_usd_per_mtok) * choices;
    const spare = micros * 1000 - input * nanosPerToken(m.input_usd_per_mtok);
    fits = Math.min(fits, perToken === 0 ? m.max_output_tokens : Math.floor(spare / perToken));
  }
  return Math.max(0, fits);
}

/**
 * Writes `tokens` as the upstream request's output ceiling, in the field
 * the provider's format reads; answers why when the request cannot be
 * lowered that far (Anthropic thinking needs max_tokens above budget_tokens).
 */
export function lowerCeiling(up: UpstreamCall, tokens: number): string | undefined {
  const body = JSON.parse(up.body.toString('utf8')) as Record<string, unknown>;
  const refused = WIRE[up.format].lowerCeiling(body, tokens);
  if (refused !== undefined) return refused;
  up.body = Buffer.from(JSON.stringify(body));
  return undefined;
}

/**
 * The one output-ceiling rule (docs/proxy.md): whatever the client's format
 * and the provider's, the request sent asks for at most the alias's
 * `max_output_tokens` per choice, in the provider's field, and names a
 * ceiling even when the client gave none, so the hold (outputCeiling)
 * assumes exactly what is sent. A client ceiling within the cap is already
 * in the request (passed through or translated): nothing is rewritten.
 */
export function capOutput(up: UpstreamCall, call: ParsedCall, model: ModelConfig): UpstreamCall {
  if (call.maxTokens !== undefined && call.maxTokens <= model.max_output_tokens) return up;
  const added = call.maxTokens === undefined ? withCeilingMember(up, call, model.max_output_tokens) : undefined;
  if (added) up.body = added;
  else lowerCeiling(up, model.max_output_tokens);
  return up;
}

const isJsonSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/**
 * A request passed through in the client's format, with its format's
 * ceiling member added first and its bytes otherwise as they were: most
 * clients name no ceiling, and parsing and writing a whole conversation
 * again for one number cost every such call (on a 100 KB agent body 283 µs
 * against 30–40 µs for the copy). Undefined, for the parse above, when the
 * request is translated, its format's ceiling is nested or always sent, or
 * the client's body has a ceiling member at all (a null one): its parsed top
 * level says so without a search of the bytes.
 */
export function withCeilingMember(up: UpstreamCall, call: ParsedCall, tokens: number): Buffer | undefined {
  const added = WIRE[up.format].addedCeiling;
  if (!added || up.translate !== undefined || added.names.some((name) => name in call.body)) return undefined;
  const body = up.body;
  let open = 0;
  while (isJsonSpace(body[open])) open++;
  if (body[open] !== 0x7b) return undefined;
  let next = open + 1;
  while (isJsonSpace(body[next])) next++;
  const member = `"${added.member}":${tokens}${body[next] === 0x7d ? '' : ','}`;
  return Buffer.concat([body.subarray(0, open + 1), Buffer.from(member), body.subarray(open + 1)]);
}
