/** The model catalogue both list endpoints answer with (the upstream models of models.example.json). */
const MODELS = [
  { id: 'claude-sonnet-4-5', name: 'Claude Sonnet 4.5', owner: 'anthropic' },
  { id: 'claude-haiku-4-5', name: 'Claude Haiku 4.5', owner: 'anthropic' },
  { id: 'gpt-4o-mini', name: 'GPT-4o mini', owner: 'openai' },
];

const CREATED = 1_735_689_600; // 2025-01-01T00:00:00Z

export const OPENAI_MODELS_JSON = JSON.stringify({
  object: 'list',
  data: MODELS.map((m) => ({ id: m.id, object: 'model', created: CREATED, owned_by: m.owner })),
});

export const ANTHROPIC_MODELS_JSON = JSON.stringify({
  data: MODELS.map((m) => ({
    type: 'model',
    id: m.id,
    display_name: m.name,
    created_at: new Date(CREATED * 1000).toISOString(),
  })),
  has_more: false,
  first_id: MODELS[0]!.id,
  last_id: MODELS[MODELS.length - 1]!.id,
});

/** Google's list: `models/{id}` names, token limits, the methods each model supports. */
export const GOOGLE_MODELS_JSON = JSON.stringify({
  models: [...MODELS, { id: 'gemini-2.5-flash', name: 'Gemini 2.5 Flash', owner: 'google' }].map((m) => ({
    name: `models/${m.id}`,
    version: '001',
    displayName: m.name,
    inputTokenLimit: 1_048_576,
    outputTokenLimit: 65_536,
    supportedGenerationMethods: ['generateContent', 'countTokens'],
  })),
});
