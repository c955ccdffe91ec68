import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type CodexRun = { exit: number | string; stdout: string; stderr: string };

/**
 * `codex exec "<prompt>"` (the npm package's binary) with a temporary
 * CODEX_HOME whose config.toml points a model provider at Tollgate, as the
 * README's recipe does. A dead HTTPS proxy keeps anything else it might send
 * on the machine. `webSocket`: the provider says it `supports_websockets`, so
 * Codex opens its Responses WebSocket (one per session) instead of HTTP.
 */
export function runCodexExec(baseUrl: string, key: string, model: string, prompt: string, options: { webSocket?: boolean } = {}): Promise<CodexRun> {
  const tmp = mkdtempSync(join(tmpdir(), 'tollgate-codex-'));
  const home = join(tmp, 'codex-home');
  const work = join(tmp, 'work');
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(
    join(home, 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "tollgate"',
      '',
      '[model_providers.tollgate]',
      'name = "Tollgate"',
      `base_url = "${baseUrl}"`,
      'env_key = "TOLLGATE_API_KEY"',
      'wire_api = "responses"',
      ...(options.webSocket ? ['supports_websockets = true'] : []),
      '',
    ].join('\n'),
  );
  return new Promise((resolve) => {
    const child = spawn(join(process.cwd(), 'node_modules/.bin/codex'), ['exec', '--skip-git-repo-check', prompt], {
      cwd: work,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: tmp,
        CODEX_HOME: home,
        TOLLGATE_API_KEY: key,
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
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      rmSync(tmp, { recursive: true, force: true });
      resolve({ exit: code ?? signal ?? 'unknown', stdout: stdout.slice(-4000), stderr: stderr.slice(-4000) });
    });
  });
}
