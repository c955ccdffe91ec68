// Records what the real clients send (npx tsx test/support/capture-clients.ts
// [client…]) and writes test/fixtures/captures/<client>.json: every request
// they made to a loopback server that answers like the provider would,
// secrets redacted, volatile values made placeholders (capture/scrub.ts).
// Run it again after moving a client's version, and read the diff.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { claudeWorkDir, runAgents, runAiSdkAnthropic, runAiSdkOpenAI, runClaude, runCodex, runOpenAISdk, type RunResult } from './capture/clients.js';
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

const clients: Client[] = [
  {
    name: 'codex',
    pkg: '@openai/codex',
    how: 'codex exec --skip-git-repo-check "say hi"; config.toml provider with wire_api = "responses"',
    drive: (s, tmp) => runCodex(root, s.url, tmp),
  },
  {
    name: 'codex-websocket',
    pkg: '@openai/codex',
    how: 'as codex, with supports_websockets = true on the provider; the server answers the upgrade 426',
    drive: (s, tmp) => runCodex(root, s.url, tmp, true),
  },
  {
    name: 'claude-code',
    pkg: '@anthropic-ai/claude-code',
    how: 'claude -p "say hi"; ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_MODEL only',
    drive: (s, tmp) => runClaude(root, s.url, tmp, 'say hi'),
  },
  {
    name: 'claude-code-tool',
    pkg: '@anthropic-ai/claude-code',
    how: 'claude -p "read hello.txt"; the server answers one Read tool_use, then text',
    drive: async (s, tmp) => {
      s.tool = { name: 'Read', input: { file_path: join(claudeWorkDir(tmp), 'hello.txt') } };
      return runClaude(root, s.url, tmp, 'read hello.txt');
    },
  },
  {
    name: 'agents-sdk',
    pkg: '@openai/agents',
    how: 'run(new Agent({instructions, tools: [get_weather]}), "say hi"), then the same with stream: true',
    drive: (s) => runAgents(s.url),
  },
  {
    name: 'ai-sdk-openai',
    pkg: '@ai-sdk/openai',
    how: 'createOpenAI({baseURL: …/v1})(model): generateText, then streamText',
    drive: (s) => runAiSdkOpenAI(s.url),
  },
  {
    name: 'ai-sdk-anthropic',
    pkg: '@ai-sdk/anthropic',
    how: 'createAnthropic({baseURL: …/anthropic/v1})(model): generateText, then streamText',
    drive: (s) => runAiSdkAnthropic(s.url),
  },
  {
    name: 'openai-sdk',
    pkg: 'openai',
    how: 'responses.create, responses.create({stream: true}), responses.stream',
    drive: (s) => runOpenAISdk(s.url),
  },
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
