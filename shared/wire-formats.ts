/**
 * The wire formats Tollgate speaks, listed once. The proxy's registry
 * (proxy/wire/registry.ts), the usage report's `format`, the pricing of
 * cache reads and the models file's provider endpoints all derive from this
 * table, so a new format is one entry here and the compiler asks for the rest.
 */

/** Each format's facts that the control plane and the models file need too. */
interface SharedFormatFacts {
  /** Its name in the models file (`endpoints.<name>`, the older `<name>_base_url` / `<name>_auth_header`). */
  configName: string;
  /**
   * The price of a cache read when the model entry gives none, as a share of
   * the input price: Anthropic's reports name cache reads it bills at a
   * tenth; OpenAI's report cached tokens without saying what they cost.
   */
  defaultCacheReadHundredths: bigint;
}

export const WIRE_FORMAT_FACTS = {
  chat: { configName: 'chat_completions', defaultCacheReadHundredths: 100n },
  messages: { configName: 'messages', defaultCacheReadHundredths: 10n },
  responses: { configName: 'responses', defaultCacheReadHundredths: 100n },
} as const satisfies Record<string, SharedFormatFacts>;

export type WireFormat = keyof typeof WIRE_FORMAT_FACTS;

/** The wire formats a client may call in, in the order a provider's endpoints are tried when it lacks the client's (chat first: the pivot). */
export const WIRE_FORMATS = Object.keys(WIRE_FORMAT_FACTS) as readonly WireFormat[];

/** A format's name in the models file. */
export type WireFormatConfigName = (typeof WIRE_FORMAT_FACTS)[WireFormat]['configName'];

export const WIRE_FORMAT_CONFIG_NAMES = WIRE_FORMATS.map((f) => WIRE_FORMAT_FACTS[f].configName) as readonly WireFormatConfigName[];

/** What a usage record says the client called: a wire format, or embeddings (asked in the Chat format's dialect). */
export const USAGE_FORMATS = [...WIRE_FORMATS, 'embeddings'] as const;
export type UsageFormat = (typeof USAGE_FORMATS)[number];
