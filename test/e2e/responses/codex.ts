import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type CodexRun = { exit: number | string; stdout: string; stderr: string };

/**
 * How config.toml points Codex at Tollgate:
 * - `custom` (the README's recipe): a `[model_providers.tollgate]` entry,
 *   `wire_api = "responses"`, with `model_catalog_url` when `catalog` is set;
 *   Codex compacts such a provider's conversations itself (one more call).
 * - `openai`: the built-in OpenAI provider with `openai_base_url`; Codex
 *   asks that provider to compact (a `compaction_trigger` item).
 */
export type CodexSetup = {
  provider?: 'custom' | 'openai';
  catalog?: boolean;
  /** The provider says it `supports_websockets`: Codex opens its Responses WebSocket (one per session) instead of HTTP. */
  webSocket?: boolean;
  /** More config.toml lines (top-level keys first, then tables). */
  config?: string[];
  timeoutMs?: number;
};

/** An MCP server (stdio) with one tool, `echo`, for Codex's MCP namespace tools. */
export const MCP_ECHO = ['[mcp_servers.echo]', 'command = "node"', `args = ["${join(process.cwd(), 'test/support/capture/mcp-echo-server.mjs')}"]`];

function providerLines(baseUrl: string, setup: CodexSetup): string[] {
  if (setup.provider === 'openai') return [`openai_base_url = "${baseUrl}"`];
  return [
    'model_provider = "tollgate"',
    '',
    '[model_providers.tollgate]',
    'name = "Tollgate"',
    `base_url = "${baseUrl}"`,
    'env_key = "TOLLGATE_API_KEY"',
    'wire_api = "responses"',
    ...(setup.catalog ? [`model_catalog_url = "${baseUrl}/models"`] : []),
    ...(setup.webSocket ? ['supports_websockets = true'] : []),
  ];
}

/**
 * `codex exec "<prompt>"` (the npm package's binary) with a temporary
 * CODEX_HOME whose config.toml points Codex at Tollgate. A dead HTTPS proxy
 * keeps anything else it might send on the machine.
 */
export function runCodexExec(baseUrl: string, key: string, model: string, prompt: string, setup: CodexSetup = {}): Promise<CodexRun> {
  const tmp = mkdtempSync(join(tmpdir(), 'tollgate-codex-'));
  const home = join(tmp, 'codex-home');
  const work = join(tmp, 'work');
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  const extra = setup.config ?? [];
  const firstTable = extra.findIndex((l) => l.startsWith('['));
  const top = firstTable < 0 ? extra : extra.slice(0, firstTable);
  const tables = firstTable < 0 ? [] : extra.slice(firstTable);
  const lines = [`model = "${model}"`, ...top, ...providerLines(baseUrl, setup), '', ...tables, ''];
  writeFileSync(join(home, 'config.toml'), lines.join('\n'));
  return new Promise((resolve) => {
    const child = spawn(join(process.cwd(), 'node_modules/.bin/codex'), ['exec', '--skip-git-repo-check', prompt], {
      cwd: work,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: tmp,
        CODEX_HOME: home,
        TOLLGATE_API_KEY: key,
        OPENAI_API_KEY: key,
        CODEX_API_KEY: key,
        HTTPS_PROXY: 'http://127.0.0.1:9',
        HTTP_PROXY: 'http://127.0.0.1:9',
        NO_PROXY: '127.0.0.1,localhost',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), setup.timeoutMs ?? 90_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      rmSync(tmp, { recursive: true, force: true });
      resolve({ exit: code ?? signal ?? 'unknown', stdout: stdout.slice(-4000), stderr: stderr.slice(-6000) });
    });
  });
}
