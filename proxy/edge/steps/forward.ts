import { forward } from '../../forward.js';
import { DROPPED_HEADER, droppedHeaderValue } from '../../dropped.js';
import { upstreamHeaders } from '../../headers.js';
import type { CallState, EdgeDeps, StepOutcome } from './step.js';

/** Step `forward`: the provider's request sent and its answer relayed to the client (translated when the formats differ). */
export async function forwardCall(s: CallState, deps: EdgeDeps): Promise<StepOutcome> {
  const up = s.up!;
  const settings = deps.config.proxy;
  const headers = upstreamHeaders(
    s.req.headers,
    { header: up.authHeader, secret: s.provider!.api_key ?? '' },
    up.body.length,
    up.extraHeaders,
    up.format,
  );
  // The one observation inside a step: the trace context must ride on the provider request's headers.
  deps.observe.upstream(s.obs, headers);
  s.outcome = await forward(
    {
      pool: deps.pool(up.origin),
      origin: up.origin,
      path: up.path,
      headers,
      timing: s.obs,
      body: up.body,
      format: up.format,
      dropUsageChunk: up.dropUsageChunk,
      translate: up.translate,
      extraHeaders: up.dropped.length ? { ...s.limitHeaders, [DROPPED_HEADER]: droppedHeaderValue(up.dropped) } : s.limitHeaders,
      headersTimeoutMs: settings.upstreamHeadersTimeoutMs,
      idleTimeoutMs: settings.upstreamIdleTimeoutMs,
    },
    s.res,
  );
  return undefined;
}
