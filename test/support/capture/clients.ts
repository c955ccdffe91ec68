import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAnthropic } from '@ai-sdk/anthropic';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { gatewayKeyAuthClient } from '../vertex-sdk-auth.js';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool } from '@openai/agents';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';

// How each real client is driven against the capture server. Everything is
// pointed at loopback; the child processes also get a dead HTTPS proxy so
// nothing they try to send elsewhere (telemetry, update checks) leaves the
// machine.

export const WORKSPACE = 'acme';
export const MODEL = 'capture-model';
const KEY = 'tg-capture-secret';
const PROMPT = 'say hi';

/** What a client run printed, for the notes: the fixture holds only requests. */
export type RunResult = { exit: number | string; stdout: string; stderr: string };

const BLACKHOLE = {
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  NO_PROXY: '127.0.0.1,localhost',
};

export function runProcess(bin: string, args: string[], env: Record<string, string>, cwd: string, timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...BLACKHOLE, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ exit: code ?? signal ?? 'unknown', stdout: stdout.slice(-4000), stderr: stderr.slice(-4000) });
    });
  });
}

/** `codex exec` with a model provider whose base URL is the server (wire_api = "responses"). */
export function runCodex(root: string, base: string, tmp: string, websockets = false): Promise<RunResult> {
  const home = join(tmp, 'codex-home');
  const work = join(tmp, 'codex-work');
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(
    join(home, 'config.toml'),
    [
      `model = "${MODEL}"`,
      'model_provider = "tollgate"',
      '',
      '[model_providers.tollgate]',
      'name = "Tollgate"',
      `base_url = "${base}/${WORKSPACE}/v1"`,
      'env_key = "TOLLGATE_API_KEY"',
      'wire_api = "responses"',
      // Codex only tries its WebSocket transport where the provider says it has one.
      ...(websockets ? ['supports_websockets = true'] : []),
      '',
    ].join('\n'),
  );
  return runProcess(
    join(root, 'node_modules/.bin/codex'),
    ['exec', '--skip-git-repo-check', PROMPT],
    { HOME: tmp, CODEX_HOME: home, TOLLGATE_API_KEY: KEY },
    work,
    90_000,
  );
}

/** `claude -p` with its default settings but the base URL, a token and the model alias. */
export function claudeWorkDir(tmp: string): string {
  return join(tmp, 'claude-work');
}

export function runClaude(root: string, base: string, tmp: string, prompt: string): Promise<RunResult> {
  const work = claudeWorkDir(tmp);
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'hello.txt'), 'hello\n');
  return runProcess(
    join(root, 'node_modules/.bin/claude'),
    ['-p', prompt],
    {
      HOME: tmp,
      ANTHROPIC_BASE_URL: `${base}/${WORKSPACE}/anthropic`,
      ANTHROPIC_AUTH_TOKEN: KEY,
      ANTHROPIC_MODEL: MODEL,
      // Non-API traffic only (it would go to Anthropic, not to the base URL).
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_AUTOUPDATER: '1',
    },
    work,
    120_000,
  );
}

/**
 * `claude -p` in its Vertex AI mode pointed at the server's Vertex route:
 * `CLAUDE_CODE_USE_VERTEX`, the base URL, skip-auth (so no Google
 * credentials are looked for) and the gateway key as `ANTHROPIC_AUTH_TOKEN`.
 */
export function runClaudeVertex(root: string, base: string, tmp: string, prompt: string): Promise<RunResult> {
  const work = claudeWorkDir(tmp);
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'hello.txt'), 'hello\n');
  return runProcess(
    join(root, 'node_modules/.bin/claude'),
    ['-p', prompt],
    {
      HOME: tmp,
      CLAUDE_CODE_USE_VERTEX: '1',
      CLAUDE_CODE_SKIP_VERTEX_AUTH: '1',
      ANTHROPIC_VERTEX_BASE_URL: `${base}/${WORKSPACE}/vertex/v1`,
      ANTHROPIC_VERTEX_PROJECT_ID: 'capture-project',
      CLOUD_ML_REGION: 'us-east5',
      ANTHROPIC_AUTH_TOKEN: KEY,
      ANTHROPIC_MODEL: MODEL,
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_AUTOUPDATER: '1',
    },
    work,
    120_000,
  );
}

/** `@anthropic-ai/vertex-sdk` at the server's Vertex route with the gateway key as its bearer token: create, stream, countTokens. */
export async function runVertexSdk(base: string): Promise<void> {
  const client = new AnthropicVertex({
    baseURL: `${base}/${WORKSPACE}/vertex/v1`,
    projectId: 'capture-project',
    region: 'us-east5',
    authClient: gatewayKeyAuthClient(KEY),
  });
  const messages = [{ role: 'user' as const, content: PROMPT }];
  await client.messages.create({ model: MODEL, max_tokens: 64, messages });
  await client.messages.stream({ model: MODEL, max_tokens: 64, messages }).finalMessage();
  await client.messages.countTokens({ model: MODEL, messages });
}

/** The Agents SDK's default model through `run(agent, …)`, with one function tool offered. */
export async function runAgents(base: string): Promise<void> {
  setTracingDisabled(true);
  setDefaultOpenAIClient(new OpenAI({ baseURL: `${base}/${WORKSPACE}/v1`, apiKey: KEY }));
  const weather = tool({
    name: 'get_weather',
    description: 'The weather in a city.',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => `sunny in ${city}`,
  });
  const agent = new Agent({ name: 'capture', instructions: 'Answer briefly.', tools: [weather] });
  await run(agent, PROMPT);
  await run(agent, PROMPT, { stream: true }).then(async (s) => {
    await s.completed;
  });
}

/** The AI SDK's default OpenAI provider (Responses), generateText and streamText. */
export async function runAiSdkOpenAI(base: string): Promise<void> {
  const openai = createOpenAI({ baseURL: `${base}/${WORKSPACE}/v1`, apiKey: KEY });
  await generateText({ model: openai(MODEL), prompt: PROMPT });
  await streamText({ model: openai(MODEL), prompt: PROMPT }).text;
}

/** The AI SDK's Anthropic provider, whose base URL ends in /v1. */
export async function runAiSdkAnthropic(base: string): Promise<void> {
  const anthropic = createAnthropic({ baseURL: `${base}/${WORKSPACE}/anthropic/v1`, apiKey: KEY });
  await generateText({ model: anthropic(MODEL), prompt: PROMPT });
  await streamText({ model: anthropic(MODEL), prompt: PROMPT }).text;
}

/** The official SDK's Responses calls: create, create streamed, and the stream helper. */
export async function runOpenAISdk(base: string): Promise<void> {
  const client = new OpenAI({ baseURL: `${base}/${WORKSPACE}/v1`, apiKey: KEY });
  await client.responses.create({ model: MODEL, input: PROMPT });
  for await (const event of await client.responses.create({ model: MODEL, input: PROMPT, stream: true })) void event;
  await client.responses.stream({ model: MODEL, input: PROMPT }).finalResponse();
}
