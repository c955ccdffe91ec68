import { signsIn } from '../upstream-auth/index.js';
import { headersForVertex } from '../wire/vertex/betas.js';
import { messagesCountFromVertex } from '../wire/vertex/client.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../shared/errors.js';
import type { ResolvedKey } from '../../shared/contract/keys.js';
import { rateLimitHeaders } from '../rate-limits.js';
import { decideKey, decideModel } from '../decide.js';
import { forward } from '../forward.js';
import { upstreamHeaders } from '../headers.js';
import type { EdgeCall } from '../observe.js';
import { readBody } from '../request-body.js';
import { send, sendError } from './answer.js';
import { lookupKey } from './steps/key.js';
import type { EdgeDeps, Route } from './steps/step.js';
import { WIRE } from '../wire/registry.js';
import { callTarget } from './steps/parse.js';

/** Token counts per minute a key without a requests-per-minute limit may ask for. */
export const COUNT_RPM_WITHOUT_LIMIT = 600;

/**
 * Counting has its own per-key window, so the counts clients make before many
 * turns (Claude Code does) never use up the key's calls, yet a loop of them
 * cannot hammer the provider: the key's RPM, or a fixed cap when it has none.
 */
async function takeCountLimit(deps: EdgeDeps, key: ResolvedKey, obs: EdgeCall): Promise<void> {
  const limit = await deps.limits.admit(`${key.id}:count`, key.rpm ?? COUNT_RPM_WITHOUT_LIMIT, null, 0);
  if (limit.ok) return;
  obs.detail = 'count';
  const retryAfter = String(Math.max(1, Math.ceil(limit.retryAfterMs / 1000)));
  throw new AppError('rate_limited', `Rate limit reached for token counts per minute on this key. Retry after ${retryAfter}s.`, {
    headers: { ...rateLimitHeaders(limit), 'retry-after': retryAfter },
  });
}

/**
 * `messages/count_tokens` and `responses/input_tokens`: the key and model are
 * checked as for a call, but nothing is generated, held or billed; the count
 * has its own rate limit (takeCountLimit). A provider that speaks the
 * client's format counts; for any other the proxy estimates.
 */
export async function countTokens(deps: EdgeDeps, req: IncomingMessage, res: ServerResponse, r: Route, obs: EdgeCall): Promise<void> {
  const requestId = obs.requestId;
  const settings = deps.config.proxy;
  const k = decideKey(await lookupKey(deps, req, r.format, obs), r.slug, deps.now());
  if (!k.ok) throw k.error;
  await takeCountLimit(deps, k.key, obs);
  const raw = await readBody(req, settings.maxBodyBytes);
  const body = r.vertex ? messagesCountFromVertex(raw, req.headers) : raw;
  const call = await deps.bodies.parse(r.format, body, req.headers, 'count', callTarget(r));
  const verdict = decideModel(k.key, call.alias, deps.config.models, deps.now());
  if (!verdict.ok) throw verdict.error;
  const up = await deps.bodies.countCall(r.format, call, verdict.model, verdict.provider, req.headers);
  if (!up) {
    // Estimated over what a Chat provider would be sent, so what a call would refuse is refused here too.
    const tokens = await deps.bodies.countLocally(r.format, call, verdict.model, req.headers);
    const body = WIRE[r.format].countAnswer(tokens);
    send(res, 200, JSON.stringify(body), { 'x-request-id': requestId });
    return;
  }
  const secret = await deps.upstreamAuth.secretFor(verdict.provider);
  const outcome = await forward(
    {
      pool: deps.pool(up.origin),
      origin: up.origin,
      path: up.path,
      headers: upstreamHeaders(
        verdict.provider.vertex === undefined ? req.headers : headersForVertex(req.headers, up.format).headers,
        { header: up.authHeader, secret, rotating: signsIn(verdict.provider) },
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
  if (outcome.kind === 'failed') sendError(res, r.format, outcome.error, { 'x-request-id': requestId });
}
