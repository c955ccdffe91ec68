import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorKind } from '../../shared/errors.js';
import type { JsonObject } from '../../shared/json.js';
import type { ListedModel } from '../../shared/client-names.js';
import type { AuthHeader } from '../../shared/models.js';
import type { ParsedCall } from '../call.js';
import type { AnswerTranslator, FormatTranslation } from '../translate/types.js';
import type { OutputLimits } from './fields.js';
import type { UsageReader } from './usage-reader.js';

/** What a client may do on one of a format's edge paths. */
export type EdgeAction = 'call' | 'compact' | 'count' | 'models' | 'embed';

/** What a model path says besides the workspace: its action, the alias, whether it streams and (a stream) whether as SSE. */
export interface PathTarget {
  action: EdgeAction | 'model';
  alias?: string;
  stream: boolean;
  sse: boolean;
}

/**
 * A format whose paths name the model and the action (Google's
 * `models/{model}:streamGenerateContent`) instead of its body.
 */
export interface ModelInPath {
  /** The path after `/{ws}/` → what it asks; undefined when it is not one of this format's. */
  route(rest: string, query: string): PathTarget | undefined;
  /** The call from its body and what its path said. */
  parse(body: JsonObject, raw: Buffer, alias: string, stream: boolean, purpose: 'call' | 'count'): ParsedCall;
  /** The provider's path (under its base URL) of a model's call or count, and the query a stream asks with. */
  providerPath(model: string, action: 'call' | 'count', stream: boolean): { path: string; query: string };
  /** The query parameter a client may give its key in (never logged: the access log drops the query). */
  keyParam: string;
  /** One model's answer (`GET …/models/{alias}`). */
  oneModel(model: ListedModel): string;
  /** The answer translator of a stream the client asked for other than as SSE (`sse` false), and its content type. */
  otherStream(inner: AnswerTranslator | undefined): { translate: AnswerTranslator; contentType: string };
}

/**
 * Everything the proxy knows of one wire format, whichever side of a call it
 * is on. Each format's folder (proxy/wire/<format>/index.ts) fills one; the
 * rest of the proxy asks WIRE, never the format's name.
 */
export interface WireParts {
  /** Its edge paths: the part after `/{ws}/` they share (`v1`, `anthropic/v1`), and each path under it with its action. */
  edge: {
    base: string;
    paths: Readonly<Record<string, EdgeAction>>;
    /** What its SDKs' base URL ends in after `/{ws}` (told to a caller whose path lacks the slug). */
    sdkBase: string;
    /** An unroutable path in this format (answered in its shape); undefined: only the pivot's default. */
    pathMark: RegExp | undefined;
    /** A call no route matched that is this format's, by its path or a header it alone sends; undefined: only the pivot's default. */
    unroutedMark: { path: RegExp; header: string } | undefined;
    /** A call without the workspace slug gets a 400, not a 404 (Claude Code shows any 404 as a model problem and hides its message). */
    sluglessIsBadRequest: boolean;
    /** Its call path also takes a WebSocket upgrade, each frame one call (Codex's Responses transport). */
    webSocket: boolean;
  };
  /** The header a client's key arrives in (`authorization` carries `Bearer <key>`). */
  clientKeyHeader: 'authorization' | 'x-api-key' | 'x-goog-api-key';
  /** Set for a format whose paths name the model (see ModelInPath). */
  modelInPath?: ModelInPath;
  /** Its provider's API: the path of a call under the base URL, of a token count (undefined when it has none), the key's default header. */
  provider: { callPath: string; countPath: string | undefined; authHeader: AuthHeader };
  /** Headers a translated call to a provider of this format must carry (the client of another format never sends them). */
  requiredProviderHeaders: Readonly<Record<string, string>>;
  /** The client's headers that mean something only to a provider of this format's API (`anthropic-beta`), passed to no other. */
  ownHeaders: readonly string[];
  /** The API family, as OpenTelemetry's `gen_ai.system` names it. */
  genAiSystem: string;
  /** The format's own checks of a call's body (and headers), after the shared ones (wire/parse.ts). */
  outputLimits(body: JsonObject, headers: IncomingHttpHeaders, purpose: 'call' | 'count'): OutputLimits;
  /** Writes `tokens` as a provider request's output ceiling; answers why when the request cannot be lowered that far. */
  lowerCeiling(body: Record<string, unknown>, tokens: number): string | undefined;
  /**
   * Where a request that names no output ceiling gets one without being
   * parsed again (money/ceiling.ts): the top-level member written, and every
   * member name whose presence means the request does name one. Undefined
   * for a format whose ceiling is nested or always present.
   */
  addedCeiling?: { member: string; names: readonly string[] };
  /** The body fields holding the conversation: what makes a body large (body-work/jobs.ts). */
  conversationFields: readonly string[];
  /**
   * For a streamed call whose client did not ask for the usage frame it is
   * billed by: the body asking for it (the frame is dropped on the way
   * back). Undefined when the format always reports usage.
   */
  withStreamUsage(body: Record<string, unknown>): Record<string, unknown> | undefined;
  /** An error body in the format's shape. */
  errorBody(kind: ErrorKind, message: string, code?: string): string;
  /** How its answers and streams report tokens. */
  usage: UsageReader;
  /** `GET …/models` in its list shape. */
  modelList(models: readonly ListedModel[]): string;
  /** A token count estimated by the proxy, in the format's answer shape. */
  countAnswer(tokens: number): JsonObject;
  /** Its mappings to and from Chat Completions, the pivot; Chat itself is the pivot. */
  viaChat: FormatTranslation | 'pivot';
  /** A provider of this format runs web search itself (Chat's `web_search_options` becomes its server tool). */
  providerSearches: boolean;
  /** Its clients expect a new assistant turn after the conversation, never a continuation of the last one. */
  wantsNewTurn: boolean;
  /** The provider may keep answers a later call names by id (`previous_response_id`): the store policy and the id's owner apply. */
  keepsAnswers: boolean;
}
