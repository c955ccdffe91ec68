export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. '/v1/chat/completions', '/anthropic/v1/messages'. */
  path: string;
  /** The query string as it arrived, with its `?` ('' when none). */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body's text exactly as it arrived ('' when empty): what a byte-for-byte check compares. */
  raw: string;
  /** Parsed JSON, or the raw text if not JSON; undefined when the body was empty. */
  body: unknown;
  /** True once the client closed before the response ended. */
  aborted: boolean;
  /** Which credential header arrived and its key (the token after `Bearer ` for authorization); null if none. */
  credential: { header: 'authorization' | 'x-api-key' | 'x-goog-api-key' | 'key'; key: string } | null;
}

/**
 * What a scripted answer reports beside its text, the way each provider does:
 * - `cachedTokens`: prompt tokens read from the cache in OpenAI's formats
 *   (Chat `prompt_tokens_details.cached_tokens`, Responses
 *   `input_tokens_details.cached_tokens`) and Google's
 *   (`usageMetadata.cachedContentTokenCount`), part of the prompt count and
 *   capped at it, as both count them;
 * - `cacheReadTokens`, `cacheWrite5mTokens`, `cacheWrite1hTokens`: Anthropic's
 *   `cache_read_input_tokens` and `cache_creation_input_tokens` (with its
 *   `cache_creation` 5-minute/1-hour split), reported beside `input_tokens`
 *   (the uncached rest), as Anthropic counts them; `cacheSplit: false` leaves
 *   the split out (older answers give only the total);
 * - `webSearches`: Anthropic's `server_tool_use.web_search_requests` (in the
 *   closing `message_delta` of a stream), or that many Responses
 *   `web_search_call` items;
 * - `reasoningTokens`: Responses `output_tokens_details.reasoning_tokens`,
 *   added to the output with a reasoning item before the answer; Gemini's
 *   `thoughtsTokenCount`, apart from `candidatesTokenCount` and in the total.
 */
/** `textOnly`: answer in text even when the request offers tools (an agent whose tools must not run, e.g. Codex's shell). */
export type OkBehavior = {
  kind: 'ok';
  outputTokens?: number;
  eventDelayMs?: number;
  cachedTokens?: number;
  reasoningTokens?: number;
  cacheReadTokens?: number;
  cacheWrite5mTokens?: number;
  cacheWrite1hTokens?: number;
  cacheSplit?: boolean;
  webSearches?: number;
  /**
   * Which tool calls the answer makes: by default every tool the request
   * allows (tools.ts); `none` for a text answer whatever tools were offered;
   * or exactly these calls (an agent's scripted turn, e.g. Claude Code's `Read`).
   * On Responses, `namespace` makes the call a namespace member's (an MCP
   * tool), and a call to a declared `custom` tool is a `custom_tool_call`
   * whose text is `input.input`.
   */
  tools?: 'none' | readonly { name: string; input: Record<string, unknown>; namespace?: string }[];
  textOnly?: boolean;
  /** JSON text written in place of every output count of the usage (`completion_tokens`, `output_tokens`): `-5`, `"12"`, `null`. */
  outputCountAs?: string;
  /** The input tokens the answer reports, instead of the body's own count. */
  inputTokens?: number;
};

export type Behavior =
  | OkBehavior
  | { kind: 'error'; status: number; body?: unknown; headers?: Record<string, string> }
  /** `afterEvents` (a stream after its first event): how many events go out before the silence, 1 unless given. */
  | { kind: 'stall'; when: 'before-headers' | 'after-first-event'; afterEvents?: number }
  | { kind: 'reset'; afterEvents: number }
  /** The connection is closed before any answer (the client sees a reset before the headers). */
  | { kind: 'drop' }
  /** HTTP 200 and an event stream whose first event is an error (Anthropic's `overloaded_error` after the 200). */
  | { kind: 'stream-error' };

export interface FakeUpstream {
  /** http://127.0.0.1:PORT */
  url: string;
  /** `${url}/v1` → POST /v1/chat/completions */
  chatCompletionsBaseUrl: string;
  /** `${url}/anthropic` → POST /anthropic/v1/messages */
  messagesBaseUrl: string;
  /** `${url}/v1` → POST /v1/responses */
  responsesBaseUrl: string;
  /** `url` → POST /v1beta/models/{model}:generateContent (Google's base URL has no version in it) */
  geminiBaseUrl: string;
  requests: RecordedRequest[];
  /** FIFO, one per accepted model request; an empty queue answers with the default ok behaviour. */
  enqueue(...behaviors: Behavior[]): void;
  /** Clears requests and queue. */
  reset(): void;
  close(): Promise<void>;
  /** Resolves once at least `count` requests have been recorded (their bodies read). */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once no response is in flight, so `aborted` flags are final. */
  idle(): Promise<void>;
}

/** A wire format the fake speaks, named as the proxy names them. */
export type Wire = 'chat' | 'messages' | 'responses' | 'gemini';

/** Which wire formats the fake speaks: a real provider mostly speaks one. `both` is Chat Completions and Messages; `all` adds Responses and Gemini. */
export type FakeFormats = 'all' | 'both' | Wire;

export interface FakeUpstreamOptions {
  port?: number;
  host?: string;
  /** One format (or `both`: Chat and Messages): the other formats' paths answer 404, as a provider without that API does (default 'all'). */
  formats?: FakeFormats;
  /** What an empty queue answers with; `{ kind: 'ok' }` unless given. */
  defaultBehavior?: OkBehavior;
  /**
   * Keep every request in `requests` (default true). A standalone or benchmark
   * run passes false: nobody reads the log there, and holding requests long
   * enough to reach the old generation costs the fake a tenth of its CPU in GC.
   */
  recordRequests?: boolean;
  /**
   * Refuse model calls that carry no provider key with a 401, as real
   * providers do (default true). The standalone runner behind the README's
   * walk-through passes false, so a reader needs no provider key to try it.
   */
  requireKey?: boolean;
}
