// Records what the real clients send (npx tsx test/support/capture-clients.ts
// [client…]) and writes test/fixtures/captures/<client>.json: every request
// they made to a loopback server that answers like the provider would,
// secrets redacted, volatile values made placeholders (capture/scrub.ts).
// Run it again after moving a client's version, and read the diff.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  claudeWorkDir,
  runAgents,
  runAiSdkAnthropic,
  runAiSdkOpenAI,
  runClaude,
  runClaudeVertex,
  runCodex,
  runOpenAISdk,
  runVertexSdk,
  type RunResult,
} from './capture/clients.js';
import { geminiWorkDir, runGeminiCli, runGenai } from './capture/gemini-clients.js';
import { scrubCaptured } from './capture/scrub.js';
import { startCaptureServer, type CaptureServer } from './capture/server.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

type Client = {
  name: string;
  /** The npm package whose version the fixture records. */
  pkg: string;
  how: string;
  drive(server: CaptureServer, tmp: string): Promise<RunResult | void>;
};

const entry = (name: string, pkg: string, how: string, drive: Client['drive']): Client => ({ name, pkg, how, drive });

const clients: Client[] = [
  entry('codex', '@openai/codex', 'codex exec "say hi"; a config.toml provider, wire_api = "responses"', (s, tmp) => runCodex(root, s.url, tmp)),
  entry('codex-websocket', '@openai/codex', 'as codex, the provider with supports_websockets = true; upgrade answered 426', (s, tmp) =>
    runCodex(root, s.url, tmp, true),
  ),
  entry('claude-code', '@anthropic-ai/claude-code', 'claude -p "say hi"; ANTHROPIC_BASE_URL, _AUTH_TOKEN, _MODEL only', (s, tmp) =>
    runClaude(root, s.url, tmp, 'say hi'),
  ),
  entry('claude-code-tool', '@anthropic-ai/claude-code', 'claude -p "read hello.txt"; one Read tool_use, then text', async (s, tmp) => {
    s.tool = { name: 'Read', input: { file_path: join(claudeWorkDir(tmp), 'hello.txt') } };
    return runClaude(root, s.url, tmp, 'read hello.txt');
  }),
  entry(
    'claude-code-vertex',
    '@anthropic-ai/claude-code',
    'claude -p "read hello.txt" with CLAUDE_CODE_USE_VERTEX, _SKIP_VERTEX_AUTH, ANTHROPIC_VERTEX_BASE_URL',
    async (s, tmp) => {
      s.tool = { name: 'Read', input: { file_path: join(claudeWorkDir(tmp), 'hello.txt') } };
      return runClaudeVertex(root, s.url, tmp, 'read hello.txt');
    },
  ),
  entry('vertex-sdk', '@anthropic-ai/vertex-sdk', 'AnthropicVertex({baseURL, accessToken}): create, stream, countTokens', (s) => runVertexSdk(s.url)),
  entry('agents-sdk', '@openai/agents', 'run(new Agent({instructions, tools}), "say hi"), then streamed', (s) => runAgents(s.url)),
  entry('ai-sdk-openai', '@ai-sdk/openai', 'createOpenAI({baseURL: …/v1})(model): generateText, streamText', (s) => runAiSdkOpenAI(s.url)),
  entry('ai-sdk-anthropic', '@ai-sdk/anthropic', 'createAnthropic({baseURL: …/anthropic/v1}): generateText, streamText', (s) =>
    runAiSdkAnthropic(s.url),
  ),
  entry('gemini-cli', '@google/gemini-cli', 'gemini -p "say hi" -m capture/model; API-key auth in settings, GOOGLE_GEMINI_BASE_URL', (s, tmp) =>
    runGeminiCli(root, s.url, tmp, 'say hi'),
  ),
  entry('gemini-cli-tool', '@google/gemini-cli', 'gemini -p "read hello.txt"; one read_file functionCall, then text', async (s, tmp) => {
    s.tool = { name: 'read_file', input: { file_path: join(geminiWorkDir(tmp), 'hello.txt') } };
    return runGeminiCli(root, s.url, tmp, 'read hello.txt');
  }),
  entry('genai-sdk', '@google/genai', 'generateContent, generateContentStream, a get_weather function-call round trip, countTokens', async (s) => {
    s.tool = { name: 'get_weather', input: { city: 'Paris' } };
    return runGenai(s.url);
  }),
  entry('openai-sdk', 'openai', 'responses.create, create({stream: true}), responses.stream', (s) => runOpenAISdk(s.url)),
];

const versionOf = (pkg: string): string =>
  (JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

const wanted = process.argv.slice(2);
for (const client of clients.filter((c) => wanted.length === 0 || wanted.includes(c.name))) {
  const server = await startCaptureServer();
  const tmp = mkdtempSync(join(tmpdir(), `capture-${client.name}-`));
  let outcome: string;
  try {
    const result = await client.drive(server, tmp);
    outcome = result ? `exit ${result.exit}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}` : 'ok';
  } catch (err) {
    outcome = `threw: ${(err as Error).message}`;
  }
  await server.close();
  const fixture = {
    client: client.name,
    package: client.pkg,
    version: versionOf(client.pkg),
    how: client.how,
    requests: server.requests.map((r) => scrubCaptured(r, tmp)),
  };
  writeFileSync(join(root, 'test/fixtures/captures', `${client.name}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
  rmSync(tmp, { recursive: true, force: true });
  console.log(`== ${client.name} ${fixture.version}: ${fixture.requests.length} requests; ${outcome}`);
}
