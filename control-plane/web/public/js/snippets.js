// @ts-check
// Copy-paste examples for the official SDKs and curl, filled with this
// workspace's real base URLs. The key is read from the environment so a
// pasted snippet never carries a secret into source control.

const q = (s) => JSON.stringify(s);
const shellQuote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

export function snippets({ chatBaseUrl, messagesBaseUrl, model }) {
  const chatBody = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello!' }] });
  const responsesBody = JSON.stringify({ model, input: 'Hello!' });
  const messagesBody = JSON.stringify({ model, max_tokens: 1024, messages: [{ role: 'user', content: 'Hello!' }] });
  return [
    {
      id: 'py-openai',
      label: 'Python · openai',
      code: `import os
from openai import OpenAI

client = OpenAI(
    base_url=${q(chatBaseUrl)},
    api_key=os.environ["TOLLGATE_API_KEY"],
)
reply = client.chat.completions.create(
    model=${q(model)},
    messages=[{"role": "user", "content": "Hello!"}],
)
print(reply.choices[0].message.content)
`,
    },
    {
      id: 'py-anthropic',
      label: 'Python · anthropic',
      code: `import os
from anthropic import Anthropic

client = Anthropic(
    base_url=${q(messagesBaseUrl)},
    api_key=os.environ["TOLLGATE_API_KEY"],
)
message = client.messages.create(
    model=${q(model)},
    max_tokens=1024,
    messages=[{"role": "user", "content": "Hello!"}],
)
print(message.content[0].text)
`,
    },
    {
      id: 'ts-openai',
      label: 'TypeScript · openai',
      code: `import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: ${q(chatBaseUrl)},
  apiKey: process.env.TOLLGATE_API_KEY,
});
const reply = await client.chat.completions.create({
  model: ${q(model)},
  messages: [{ role: 'user', content: 'Hello!' }],
});
console.log(reply.choices[0].message.content);
`,
    },
    {
      id: 'ts-anthropic',
      label: 'TypeScript · @anthropic-ai/sdk',
      code: `import Anthropic from '@anthropic-ai/sdk';

const client = new Anthropic({
  baseURL: ${q(messagesBaseUrl)},
  apiKey: process.env.TOLLGATE_API_KEY,
});
const message = await client.messages.create({
  model: ${q(model)},
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Hello!' }],
});
console.log(message.content);
`,
    },
    {
      id: 'ts-responses',
      label: 'TypeScript · openai (Responses)',
      code: `import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: ${q(chatBaseUrl)},
  apiKey: process.env.TOLLGATE_API_KEY,
});
const response = await client.responses.create({
  model: ${q(model)},
  input: 'Hello!',
});
console.log(response.output_text);
`,
    },
    {
      id: 'ts-ai-sdk',
      label: 'TypeScript · AI SDK',
      code: `import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';

// The default OpenAI provider calls the Responses API.
const openai = createOpenAI({
  baseURL: ${q(chatBaseUrl)},
  apiKey: process.env.TOLLGATE_API_KEY,
});
const { text } = await generateText({ model: openai(${q(model)}), prompt: 'Hello!' });
console.log(text);
`,
    },
    {
      id: 'ts-agents',
      label: 'TypeScript · Agents SDK',
      code: `import OpenAI from 'openai';
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';

setDefaultOpenAIClient(new OpenAI({
  baseURL: ${q(chatBaseUrl)},
  apiKey: process.env.TOLLGATE_API_KEY,
}));
// Traces would otherwise go to OpenAI's own platform.
setTracingDisabled(true);
// Name the model: the SDK's default is not one of the workspace's aliases.
const agent = new Agent({ name: 'assistant', instructions: 'Be brief.', model: ${q(model)} });
const result = await run(agent, 'Hello!');
console.log(result.finalOutput);
`,
    },
    {
      id: 'codex',
      label: 'Codex CLI',
      code: `# ~/.codex/config.toml — then: export TOLLGATE_API_KEY=…; codex
model = ${q(model)}
model_provider = "tollgate"

[model_providers.tollgate]
name = "Tollgate"
base_url = ${q(chatBaseUrl)}
env_key = "TOLLGATE_API_KEY"
wire_api = "responses"
`,
    },
    {
      id: 'claude-code',
      label: 'Claude Code',
      code: `# Claude Code needs only these variables (no settings file).
export ANTHROPIC_BASE_URL=${shellQuote(messagesBaseUrl)}
export ANTHROPIC_AUTH_TOKEN="$TOLLGATE_API_KEY"
export ANTHROPIC_MODEL=${shellQuote(model)}
# Its fast model too: by default a Claude model name, which no alias answers to.
export ANTHROPIC_DEFAULT_HAIKU_MODEL=${shellQuote(model)}
claude
`,
    },
    {
      id: 'curl-chat',
      label: 'curl · Chat Completions',
      code: `curl ${chatBaseUrl}/chat/completions \\
  -H "Authorization: Bearer $TOLLGATE_API_KEY" \\
  -H "content-type: application/json" \\
  -d ${shellQuote(chatBody)}
`,
    },
    {
      id: 'curl-responses',
      label: 'curl · Responses',
      code: `curl ${chatBaseUrl}/responses \\
  -H "Authorization: Bearer $TOLLGATE_API_KEY" \\
  -H "content-type: application/json" \\
  -d ${shellQuote(responsesBody)}
`,
    },
    {
      id: 'curl-messages',
      label: 'curl · Messages',
      code: `curl ${messagesBaseUrl}/v1/messages \\
  -H "x-api-key: $TOLLGATE_API_KEY" \\
  -H "anthropic-version: 2023-06-01" \\
  -H "content-type: application/json" \\
  -d ${shellQuote(messagesBody)}
`,
    },
  ];
}
