import type { UpstreamAuth } from '../../upstream-auth/index.js';
import type { VertexRoute } from '../../wire/vertex/client.js';
import type { AbandonedReads } from '../../abandoned.js';
import type { ResponseIdReader, ResponseIds } from '../../response-ids.js';
import type { BodyWork } from '../../body-work/index.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pool } from 'undici';
import type { NowMs } from '../../../shared/clock.js';
import type { Config } from '../../../shared/config.js';
import type { AppError } from '../../../shared/errors.js';
import type { Logger } from '../../../shared/logger.js';
import type { UsageWarnings } from '../../money/usage-warnings.js';
import type { ModelConfig, ProviderConfig } from '../../../shared/models.js';
import type { ResolvedKey } from '../../../shared/contract/keys.js';
import type { ParsedCall, Usage, WireFormat } from '../../call.js';
import type { UpstreamCall } from '../../wire/index.js';
import type { ForwardOutcome } from '../../forward.js';
import type { KeyCache } from '../../key-cache.js';
import type { HoldStore } from '../../money/holds.js';
import type { HeldCall, Metering } from '../../money/metering.js';
import type { EdgeCall, EdgeObserver } from '../../observe.js';
import type { RateLimits } from '../../rate-limits.js';
import type { DeploymentRef } from '../../routing/deployments.js';
import type { Routing } from '../../routing/route-call.js';
import type { UpstreamAuthorizers } from '../../upstream-auth/index.js';

/** What a request asks: a model call (a Responses compaction is one), embeddings, a token count, the model list or one model. */
export type Action = 'call' | 'compact' | 'embed' | 'count' | 'models' | 'model';

/** What the edge is built from (runtime.ts wires them). */
export interface EdgeDeps {
  config: Config;
  logger: Logger;
  keys: KeyCache;
  limits: RateLimits;
  holds: HoldStore;
  metering: Metering;
  pool(origin: string): Pool;
  observe: EdgeObserver;
  now: NowMs;
  /** Balancing, affinity and deployment health (proxy/routing/). */
  routing: Routing;
  /** Parse, checks, translation and local counts of a body: in a worker thread when it is large (proxy/body-work/). */
  bodies: BodyWork;
  /** The bound on calls read on after their client left (abandoned.ts). */
  abandoned: AbandonedReads;
  /** Which workspace each Responses response id went to (response-ids.ts). */
  responseIds: ResponseIds;
  /** Missing or malformed usage, warned once per provider per episode (proxy/money/usage-warnings.ts). */
  usageWarnings: UsageWarnings;
  /** A cloud provider's credentials for each attempt (proxy/upstream-auth/). */
  authorizers: UpstreamAuthorizers;
  /** The key or cloud token each provider call carries (proxy/upstream-auth/). */
  upstreamAuth: UpstreamAuth;
}

/** A routed request: which format, which workspace, and which action it asks (its steps: edge/actions.ts). */
export interface Route {
  format: WireFormat;
  slug: string;
  action: Action;
  /** The alias of a one-model path (`models/{alias}`), unescaped; of a call whose path names it (Gemini's, Vertex's); on a Bedrock path, its model id's alias. */
  alias?: string;
  /** A call whose path says it streams (`:streamGenerateContent`), and whether as SSE (`?alt=sse`) or one JSON array. */
  stream?: boolean;
  sse?: boolean;
  /**
   * A Bedrock runtime path: InvokeModel (`bedrock/model/{id}/invoke…`, Claude
   * Code's Bedrock mode), a Messages call, or Converse (`…/converse`,
   * `…/converse-stream`, the AWS SDK's), a Chat call; either answered as
   * Bedrock answers.
   */
  bedrock?: { stream: boolean; api: 'invoke' | 'converse' };
  /** A Vertex rawPredict path (Claude Code's Vertex mode): its body is read as the Messages call it stands for, a call's model the path's (`alias`). */
  vertex?: VertexRoute;
}

/**
 * What is billed once the answer is over: usage to settle, priced in the
 * format the provider reported it in, or a hold to hand back with the call's status.
 */
export type Bill = { kind: 'settle'; usage: Usage; format: WireFormat; status: number | undefined } | { kind: 'release'; status: number };

/**
 * One request as it goes down its action's steps (edge/actions.ts): one
 * object at run time. Each step reads what the steps before it wrote and
 * writes its own result; which fields a step may read is its stage's type
 * (`Keyed`, `Parsed`…), and the table checks, once, that each action's
 * steps before it write them.
 */
export interface CallState {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly route: Route;
  readonly requestId: string;
  /** The timing sink the key lookup and the upstream relay stamp as they go. */
  readonly obs: EdgeCall;
  readonly startedMs: number;
  key: ResolvedKey | undefined;
  /** A key that was found but refused (revoked, expired, another workspace's): its refusal is counted under it. */
  refusedKey: ResolvedKey | undefined;
  call: ParsedCall | undefined;
  model: ModelConfig | undefined;
  provider: ProviderConfig | undefined;
  up: UpstreamCall | undefined;
  inputEstimate: number;
  /** The rate-limit headers (and the request id) every answer after the limits step carries. */
  limitHeaders: Record<string, string>;
  /** Which limit refused the call (`requests`/`tokens`, `balance`/`budget`, a token count's `count`). */
  detail: string | undefined;
  held: HeldCall | undefined;
  /** The least output the call may be lowered to when the money does not cover its worst case (set by the hold step). */
  outputFloor: number;
  /** The output ceiling per choice the call was lowered to, when it was (the hold step). */
  outputLimit: number | undefined;
  /** The alias and the fallbacks the key may use, when the alias has fallbacks (set by the hold step). */
  chain: ModelConfig[] | undefined;
  outcome: ForwardOutcome | undefined;
  /** The deployment whose answer the client got, and how many were tried. */
  served: DeploymentRef | undefined;
  attempts: number;
  bill: Bill | undefined;
  costMicros: number;
  /** Set once the hold is settled or released: until then it is owed. */
  accounted: boolean;
  /** Set when the provider may keep this call's response: its id is read and recorded for the workspace. */
  responseId: ResponseIdReader | undefined;
  /** What the client's own framing lost on its way to the pivot (a Converse body's hints Chat cannot carry), named with the translation's drops. */
  clientDropped: readonly string[];
}

/** Shared by every call whose client framing dropped nothing (all but Converse's): no array made per call. */
const NO_CLIENT_DROPS: readonly string[] = Object.freeze([]);

export function newCallState(req: IncomingMessage, res: ServerResponse, route: Route, obs: EdgeCall): CallState {
  return {
    req,
    res,
    route,
    requestId: obs.requestId,
    obs,
    startedMs: performance.now(),
    key: undefined,
    refusedKey: undefined,
    call: undefined,
    model: undefined,
    provider: undefined,
    up: undefined,
    inputEstimate: 0,
    limitHeaders: {},
    detail: undefined,
    held: undefined,
    outputFloor: 0,
    outputLimit: undefined,
    chain: undefined,
    outcome: undefined,
    served: undefined,
    attempts: 0,
    bill: undefined,
    costMicros: 0,
    accounted: false,
    responseId: undefined,
    clientDropped: NO_CLIENT_DROPS,
  };
}

/** A step's outcome: `undefined` to go on to the next step, or the refusal the client is answered with. */
export type StepOutcome = AppError | undefined;

/** The fields of the call state a step writes once (undefined until then), which later steps read. */
export type Field = 'key' | 'call' | 'model' | 'provider' | 'up' | 'held' | 'outcome' | 'bill';

/** The call state once the fields `F` are written: the same object, narrowed by type alone. */
export type Has<F extends Field> = CallState & { [K in F]: NonNullable<CallState[K]> };

/** What each stage of a call has written, in the order a model call's steps write it. */
export const STAGES = {
  request: [],
  keyed: ['key'],
  parsed: ['key', 'call'],
  modelled: ['key', 'call', 'model', 'provider'],
  planned: ['key', 'call', 'model', 'provider', 'up'],
  held: ['key', 'call', 'model', 'provider', 'up', 'held'],
  forwarded: ['key', 'call', 'model', 'provider', 'up', 'held', 'outcome'],
  metered: ['key', 'call', 'model', 'provider', 'up', 'held', 'outcome', 'bill'],
} as const satisfies Record<string, readonly Field[]>;

export type Stage = keyof typeof STAGES;
/** The call state at a stage. */
export type At<S extends Stage> = Has<(typeof STAGES)[S][number]>;
/** The key admitted. */
export type Keyed = At<'keyed'>;
/** The body read and checked. */
export type Parsed = At<'parsed'>;
/** The alias found, with its provider. */
export type Modelled = At<'modelled'>;
/** The provider's request built. */
export type Planned = At<'planned'>;
/** The money held: owed from here on. */
export type Held = At<'held'>;
/** The provider's answer relayed, however it ended. */
export type Forwarded = At<'forwarded'>;
/** What the answer is billed decided. */
export type Metered = At<'metered'>;

/**
 * One step of a request, given the stage it reads. It answers at once when
 * it can (no promise, the usual case on the hot path) and with a promise
 * only when it must wait.
 */
export type Step<S extends CallState = CallState> = (s: S, deps: EdgeDeps) => StepOutcome | Promise<StepOutcome>;
