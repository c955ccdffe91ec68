// Records a long `codex exec` session: a scripted provider makes Codex call
// each kind of tool it offers — its shell (`exec_command`), `apply_patch`, an
// MCP server's tool (a namespace tool) and its goal tool — and reports enough
// input tokens that Codex compacts the conversation. Writes
// test/fixtures/captures/<CAPTURE_NAME or codex-session>.json, scrubbed.
// The two fixtures, both with the built-in OpenAI provider (which compacts
// with a `compaction_trigger` item; a custom provider compacts with a call of
// its own):
//   CAPTURE_PROVIDER=openai npx tsx test/support/capture/codex-session.ts
//     gpt-5.5: apply_patch is a custom tool, MCP tools wait behind tool_search
//   CAPTURE_NAME=codex-session-mcp CAPTURE_MODEL=capture-model CAPTURE_PROVIDER=openai npx tsx …
//     a model Codex does not know: the MCP namespace tool, no apply_patch
// CAPTURE_CATALOG=1 adds `model_catalog_url` to the custom provider;
// CAPTURE_FEATURES=a,b=false sets Codex's `[features]`.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProcess } from './clients.js';
import { scrubCaptured } from './scrub.js';
import type { Captured } from './server.js';
import { codexSessionAnswer, type SessionState } from './codex-session-answers.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const KEY = 'tg-capture-secret';
const MODEL = process.env.CAPTURE_MODEL ?? 'gpt-5.5';
const PROVIDER = process.env.CAPTURE_PROVIDER ?? 'tollgate';

function providerTable(base: string): string[] {
  if (PROVIDER === 'openai') return [];
  const catalog = process.env.CAPTURE_CATALOG ? [`model_catalog_url = "${base}/acme/v1/models"`] : [];
  return [
    '[model_providers.tollgate]',
    'name = "Tollgate"',
    `base_url = "${base}/acme/v1"`,
    'env_key = "TOLLGATE_API_KEY"',
    'wire_api = "responses"',
    ...catalog,
    '',
  ];
}
const PROMPT = 'Write hello to a.txt, patch it, echo it through the MCP server, set a goal, then say done.';

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    const text = Array.isArray(value) ? value.join(', ') : (value ?? '');
    out[name] = name === 'authorization' ? text.replace(/^(Bearer )?.*$/, '$1<redacted>') : text;
  }
  return out;
}

const requests: Captured[] = [];
const state: SessionState = { step: 0 };
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://capture');
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text.length > 0 ? (JSON.parse(text) as unknown) : undefined;
    const answer = codexSessionAnswer(req.method ?? '', url.pathname, body, state);
    requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: headersOf(req),
      answered: answer.status,
      body,
    });
    res.writeHead(answer.status, { 'content-type': answer.type });
    res.end(answer.body);
  });
});
server.on('upgrade', (_req, socket) => socket.end('HTTP/1.1 426 Upgrade Required\r\ncontent-length: 0\r\n\r\n'));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const tmp = mkdtempSync(join(tmpdir(), 'capture-codex-session-'));
const home = join(tmp, 'codex-home');
const work = join(tmp, 'codex-work');
mkdirSync(home, { recursive: true });
mkdirSync(work, { recursive: true });
writeFileSync(
  join(home, 'config.toml'),
  [
    `model = "${MODEL}"`,
    `model_provider = "${PROVIDER}"`,
    ...(PROVIDER === 'openai' ? [`openai_base_url = "${base}/acme/v1"`] : []),
    'model_context_window = 8000',
    'model_auto_compact_token_limit = 6000',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    '',
    ...providerTable(base),
    ...(process.env.CAPTURE_FEATURES
      ? ['[features]', ...process.env.CAPTURE_FEATURES.split(',').map((f) => (f.includes('=') ? f : `${f} = true`)), '']
      : []),
    '[mcp_servers.echo]',
    'command = "node"',
    `args = ["${join(root, 'test/support/capture/mcp-echo-server.mjs')}"]`,
    '',
  ].join('\n'),
);
const result = await runProcess(
  join(root, 'node_modules/.bin/codex'),
  ['exec', '--skip-git-repo-check', PROMPT],
  { HOME: tmp, CODEX_HOME: home, TOLLGATE_API_KEY: KEY, OPENAI_API_KEY: KEY },
  work,
  120_000,
);
server.closeAllConnections();
server.close();
const version = (JSON.parse(readFileSync(join(root, 'node_modules/@openai/codex/package.json'), 'utf8')) as { version: string }).version;
const fixture = {
  client: 'codex-session',
  package: '@openai/codex',
  version,
  how: `codex exec with a scripted provider: ${PROMPT}`,
  requests: requests.map((r) => scrubCaptured(r, tmp)),
};
writeFileSync(join(root, 'test/fixtures/captures', `${process.env.CAPTURE_NAME ?? 'codex-session'}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
rmSync(tmp, { recursive: true, force: true });
console.log(`codex ${version}: ${requests.length} requests; exit ${result.exit}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`);
