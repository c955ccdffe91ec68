import { capOutput, lowerCeiling } from '../../money/ceiling.js';
import { AppError } from '../../../shared/errors.js';
import type { UpstreamCall } from '../../wire/index.js';
import { forward, type ForwardOutcome } from '../../forward.js';
import { DROPPED_HEADER, droppedHeaderValue } from '../../dropped.js';
import { upstreamHeaders } from '../../headers.js';
import { responseGone } from '../../http2-compat.js';
import { signsIn } from '../../upstream-auth/index.js';
import { headersForVertex } from '../../wire/vertex/betas.js';
import { sessionOf } from '../../routing/affinity.js';
import { chainOf, isRouted, primaryOf, type DeploymentRef } from '../../routing/deployments.js';
import { routeCall } from '../../routing/route-call.js';
import { withStorePolicy } from './responses-state.js';
import { bedrockAttempt } from '../../wire/bedrock/attempt.js';
import { isConverseModel } from '../../wire/bedrock/converse-model.js';
import type { UpstreamAuthorizer } from '../../upstream-auth/index.js';
import type { CallState, EdgeDeps, Held, Keyed, Parsed, StepOutcome } from './step.js';
import { WIRE } from '../../wire/registry.js';
import { chainAnswers } from '../../translate/chain.js';
import { createConverseAnswerTranslator } from '../../wire/bedrock/converse-stream-from-chat.js';
import { EVENT_STREAM_CONTENT_TYPE } from '../../wire/bedrock/event-stream.js';
import { bedrockErrorHeaders } from '../../wire/bedrock/client-errors.js';
import { withClientDrops } from './access.js';

/** What the proxy adds to the answer: the caller's limits, who served, and what a translation dropped (only when it dropped something). */
function answerHeaders(s: CallState, d: DeploymentRef, up: UpstreamCall, contentType: string | undefined): Record<string, string> {
  const extra: Record<string, string> = { ...s.limitHeaders, ...d.headers };
  if (up.dropped.length) extra[DROPPED_HEADER] = droppedHeaderValue(up.dropped);
  if (contentType) extra['content-type'] = contentType;
  return extra;
}

/**
 * An answer its client reads other than as its format's SSE or JSON, written
 * that way whatever the provider sent: a Converse client's (from Chat, the
 * call's format, to Converse's JSON or binary event stream), or a Gemini
 * stream asked for without `alt=sse` (a JSON array).
 */
function clientStream(s: CallState, up: UpstreamCall): { translate: UpstreamCall['translate']; contentType: string | undefined } {
  if (s.route.bedrock?.api === 'converse') {
    const converse = createConverseAnswerTranslator();
    return {
      translate: up.translate ? chainAnswers(up.translate, converse) : converse,
      contentType: s.call!.stream ? EVENT_STREAM_CONTENT_TYPE : undefined,
    };
  }
  const inPath = WIRE[s.route.format].modelInPath;
  if (!inPath || s.route.stream !== true || s.route.sse !== false) return { translate: up.translate, contentType: undefined };
  return inPath.otherStream(up.translate);
}

/** A cloud provider's attempt (Bedrock): its own request and headers, authorized anew; a 503 when its credentials are missing. */
async function cloudAttempt(
  s: Parsed,
  up: UpstreamCall,
  d: DeploymentRef,
  authorizer: UpstreamAuthorizer,
): Promise<{ up: UpstreamCall; headers: string[] } | AppError> {
  try {
    return await bedrockAttempt(up, d.model.upstream_model, s.call.stream, s.req.headers, authorizer);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

/** A provider that signs in to its cloud (Vertex, Azure with Entra ID): its current token in the auth header, Vertex's betas filtered. */
async function tokenAttempt(
  s: CallState,
  deps: EdgeDeps,
  up: UpstreamCall,
  d: DeploymentRef,
): Promise<{ up: UpstreamCall; headers: string[] } | AppError> {
  let secret: string;
  try {
    secret = await deps.upstreamAuth.secretFor(d.provider);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  let client = s.req.headers;
  if (d.provider.vertex !== undefined) {
    const vertex = headersForVertex(client, up.format);
    client = vertex.headers;
    if (vertex.dropped.length > 0) up = { ...up, dropped: [...up.dropped, ...vertex.dropped] };
  }
  return { up, headers: upstreamHeaders(client, { header: up.authHeader, secret, rotating: true }, up.body.length, up.extraHeaders, up.format) };
}

/** An attempt whose credentials must be had first (a cloud provider): authorized, then relayed; a 503 when they cannot be. */
async function sendAuthorized(
  s: Parsed,
  deps: EdgeDeps,
  planned: UpstreamCall,
  d: DeploymentRef,
  failover: boolean,
  authorizer: UpstreamAuthorizer | undefined,
): Promise<ForwardOutcome> {
  const attempt = authorizer ? await cloudAttempt(s, planned, d, authorizer) : await tokenAttempt(s, deps, planned, d);
  if (attempt instanceof AppError) return { kind: 'failed', error: attempt };
  return relay(s, deps, attempt.up, attempt.headers, d, failover);
}

/**
 * One attempt on one deployment: its provider's request sent, its answer
 * relayed (translated when the formats differ). A provider with a static key
 * goes straight through, without waiting a turn for credentials.
 */
function send(s: Parsed, deps: EdgeDeps, up: UpstreamCall, d: DeploymentRef, failover: boolean): Promise<ForwardOutcome> {
  const authorizer = deps.authorizers.of(d.provider);
  if (authorizer || signsIn(d.provider)) return sendAuthorized(s, deps, up, d, failover, authorizer);
  const headers = upstreamHeaders(
    s.req.headers,
    { header: up.authHeader, secret: d.provider.api_key ?? '' },
    up.body.length,
    up.extraHeaders,
    up.format,
  );
  return relay(s, deps, up, headers, d, failover);
}

/** The request sent with its headers, and its answer relayed to the client. */
function relay(s: Parsed, deps: EdgeDeps, up: UpstreamCall, headers: string[], d: DeploymentRef, failover: boolean): Promise<ForwardOutcome> {
  const settings = deps.config.proxy;
  const answer = clientStream(s, up);
  // The one observation inside a step: the trace context must ride on the provider request's headers.
  deps.observe.upstream(s.obs, headers);
  // A stream that another deployment could serve waits no longer than the time-to-first-byte limit for its head.
  const headersTimeoutMs =
    failover && s.call.stream ? Math.min(settings.upstreamTtfbMs, settings.upstreamHeadersTimeoutMs) : settings.upstreamHeadersTimeoutMs;
  return forward(
    {
      pool: deps.pool(up.origin),
      origin: up.origin,
      path: up.path,
      headers,
      timing: s.obs,
      body: up.body,
      format: up.format,
      dropUsageChunk: up.dropUsageChunk,
      translate: answer.translate,
      extraHeaders: answerHeaders(s, d, up, answer.contentType),
      headersTimeoutMs,
      idleTimeoutMs: settings.upstreamIdleTimeoutMs,
      failover,
      abandoned: deps.abandoned,
      responseId: s.responseId,
      bedrockClient: s.route.bedrock?.api,
      errorHeaders: s.route.bedrock?.api === 'converse' ? bedrockErrorHeaders : undefined,
      bedrockProvider: d.provider.bedrock ? d.provider.name : undefined,
      refusals: d.provider.bedrock ? deps.authorizers.of(d.provider)?.episode : undefined,
      converse: isConverseModel(d.provider, d.model) ? d.model.upstream_model : undefined,
    },
    s.res,
  );
}

/** The request for another deployment than the one the access step planned for, in its provider's format (a large body's in a worker). */
async function planFor(s: Held, deps: EdgeDeps, d: DeploymentRef): Promise<UpstreamCall | AppError> {
  if (d.model === s.model && d.provider === s.provider) return s.up;
  try {
    const up = withStorePolicy(
      s,
      deps,
      capOutput(await deps.bodies.plan(s.route.format, s.call, d.model, d.provider, s.req.headers), s.call, d.model),
    );
    if (up instanceof AppError) return up;
    // A lowered ceiling (the hold step) goes out on every deployment, in its provider's field.
    if (s.outputLimit !== undefined) {
      const why = lowerCeiling(up, s.outputLimit);
      if (why) return new AppError('insufficient_funds', `The money left cannot cover this request on this deployment: ${why}.`);
    }
    return withClientDrops(s, up);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

/**
 * Step `forward`: the call sent to the alias's deployment. An alias with
 * several deployments or fallbacks goes through routing (proxy/routing/):
 * balanced, pinned to its session, failed over before the first byte.
 */
export async function forwardCall(s: Held, deps: EdgeDeps): Promise<StepOutcome> {
  const catalog = deps.config.models;
  const model = s.model;
  if (!isRouted(model)) {
    const primary = primaryOf(model, catalog);
    s.outcome = await send(s, deps, s.up, primary, false);
    s.served = s.outcome.kind === 'failed' ? undefined : primary;
    s.attempts = 1;
    s.held.deployment = s.served?.id;
    recordResponse(s, deps);
    return undefined;
  }
  const routed = await routeCall(
    {
      catalog,
      chain: s.chain ?? chainOf(model, catalog, s.key.models),
      session: sessionOf(s.req.headers, s.call, s.key.workspace_id),
      stream: s.call.stream,
      clientGone: () => responseGone(s.res),
    },
    deps.routing,
    async (d, failover) => {
      const up = await planFor(s, deps, d);
      return up instanceof AppError ? up : send(s, deps, up, d, failover);
    },
  );
  s.outcome = routed.outcome;
  s.served = routed.served;
  s.attempts = routed.attempts;
  // A fallback is billed at its own prices; the hold was sized for the dearest alias of the chain.
  if (routed.served) s.held.model = routed.served.model;
  s.held.deployment = routed.served?.id;
  recordResponse(s, deps);
  return undefined;
}

/** A response the provider may keep is this workspace's to continue (responses-state.ts). */
function recordResponse(s: Keyed, deps: EdgeDeps): void {
  const id = s.responseId?.responseId();
  if (id !== undefined) deps.responseIds.record(id, s.key.workspace_id);
}
