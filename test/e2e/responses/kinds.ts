/**
 * The three kinds of provider a Responses client may land on, by the alias the test models file gives each.
 * `answerModel`: what an answer names as its model (a passed-through answer is
 * the provider's bytes, so its own model name; a translated one the alias).
 */
export const PROVIDER_KINDS = [
  { kind: 'a provider that speaks Responses (passed through)', model: 'tg/gpt-responses', path: '/v1/responses', answerModel: 'gpt-5' },
  { kind: 'a Chat-Completions-only provider (translated)', model: 'tg/gpt-direct', path: '/v1/chat/completions', answerModel: 'tg/gpt-direct' },
  {
    kind: 'a Messages-only provider (translated through Chat)',
    model: 'tg/claude-direct',
    path: '/anthropic/v1/messages',
    answerModel: 'tg/claude-direct',
  },
] as const;
