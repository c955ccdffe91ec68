import { signsIn } from '../../upstream-auth/index.js';
import { headersForVertex } from '../../wire/vertex/betas.js';
import { AppError } from '../../../shared/errors.js';
import { rateLimitHeaders, type LimitOutcome } from '../../rate-limits.js';
import { forward } from '../../forward.js';
import { upstreamHeaders } from '../../headers.js';
import { WIRE } from '../../wire/registry.js';
import { send, sendError } from '../answer.js';
import type { CallState, EdgeDeps, Keyed, Modelled, StepOutcome } from './step.js';

/** Token counts per minute a key without a requests-per-minute limit may ask for. */
export const COUNT_RPM_WITHOUT_LIMIT = 600;

function counted(s: CallState, limit: LimitOutcome): StepOutcome {
  if (limit.ok) return undefined;
  s.detail = 'count';
  const retryAfter = String(Math.max(1, Math.ceil(limit.retryAfterMs / 1000)));
  return new AppError('rate_limited', `Rate limit reached for token counts per minute on this key. Retry after ${retryAfter}s.`, {
    headers: { ...rateLimitHeaders(limit), 'retry-after': retryAfter },
  });
}

/**
 * Step `limits` of a token count (429), before its body is read. Counting
 * has its own per-key window, so the counts clients make before many turns
 * (Claude Code does) never use up the key's calls, yet a loop of them
 * cannot hammer the provider: the key's RPM, or a fixed cap when it has none.
 */
export function takeCountLimit(s: Keyed, deps: EdgeDeps): StepOutcome | Promise<StepOutcome> {
  const limit = deps.limits.admit(`${s.key.id}:count`, s.key.rpm ?? COUNT_RPM_WITHOUT_LIMIT, null, 0);
  return limit instanceof Promise ? limit.then((l) => counted(s, l)) : counted(s, limit);
}

/**
 * Step `count`, the answer of `messages/count_tokens`, `responses/input_tokens`
 * and Gemini's `:countTokens`: nothing is generated, held or billed. A
 * provider that speaks the client's format counts; for any other the proxy
 * estimates, over what a Chat provider would be sent, so what a call would
 * refuse is refused here too.
 */
export async function answerCount(s: Modelled, deps: EdgeDeps): Promise<StepOutcome> {
  const { req, res, route, requestId } = s;
  const settings = deps.config.proxy;
  const up = await deps.bodies.countCall(route.format, s.call, s.model, s.provider, req.headers);
  if (!up) {
    const tokens = await deps.bodies.countLocally(route.format, s.call, s.model, req.headers);
    send(res, 200, JSON.stringify(WIRE[route.format].countAnswer(tokens)), { 'x-request-id': requestId });
    return undefined;
  }
  const secret = await deps.upstreamAuth.secretFor(s.provider);
  const outcome = await forward(
    {
      pool: deps.pool(up.origin),
      origin: up.origin,
      path: up.path,
      headers: upstreamHeaders(
        s.provider.vertex === undefined ? req.headers : headersForVertex(req.headers, up.format).headers,
        { header: up.authHeader, secret, rotating: signsIn(s.provider) },
        up.body.length,
        up.extraHeaders,
        up.format,
      ),
      body: up.body,
      format: up.format,
      dropUsageChunk: false,
      translate: undefined,
      extraHeaders: { 'x-request-id': requestId },
      headersTimeoutMs: settings.upstreamHeadersTimeoutMs,
      idleTimeoutMs: settings.upstreamIdleTimeoutMs,
    },
    res,
  );
  // The provider could not be reached: answered here, as a call's is (settle.ts), not as the proxy's refusal.
  if (outcome.kind === 'failed') sendError(res, route.format, outcome.error, { 'x-request-id': requestId });
  return undefined;
}
