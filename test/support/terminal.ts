import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Whether tmux is installed; in CI it must be, so callers fail there instead of skipping. */
export async function tmuxInstalled(): Promise<boolean> {
  return run('tmux', ['-V']).then(
    () => true,
    () => false,
  );
}

/**
 * A program in a real terminal (a detached tmux session), driven as a person
 * would: keys typed, the screen read. Each session has its own name, so
 * parallel tests never touch each other's.
 */
export class Terminal {
  private constructor(readonly name: string) {}

  /** Starts `argv` in a 120×40 terminal with exactly `env` (plus PATH and TERM) and `cwd`. */
  static async start(argv: string[], env: Record<string, string>, cwd: string): Promise<Terminal> {
    const name = `tollgate-${process.pid}-${randomBytes(3).toString('hex')}`;
    const vars = Object.entries({ PATH: process.env.PATH ?? '', TERM: 'xterm-256color', ...env }).map(([k, v]) => `${k}=${v}`);
    // remain-on-exit keeps the last screen readable after the program ends.
    await run('tmux', ['new-session', '-d', '-s', name, '-x', '120', '-y', '40', '-c', cwd, 'env', '-i', ...vars, ...argv]);
    await run('tmux', ['set-option', '-t', name, 'remain-on-exit', 'on']);
    return new Terminal(name);
  }

  /** Named keys (`Enter`, `Escape`, `Down`) as tmux spells them. */
  async press(...keys: string[]): Promise<void> {
    await run('tmux', ['send-keys', '-t', this.name, ...keys]);
  }

  /** Text typed literally, then Enter after a pause (a paste followed at once by Enter is taken as a newline). */
  async type(text: string): Promise<void> {
    await run('tmux', ['send-keys', '-t', this.name, '-l', text]);
    await new Promise((r) => setTimeout(r, 300));
    await this.press('Enter');
  }

  async screen(): Promise<string> {
    const { stdout } = await run('tmux', ['capture-pane', '-p', '-J', '-t', this.name]);
    return stdout;
  }

  /** Waits until the screen matches, and returns it; on timeout fails with what the screen showed. */
  async waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < until) {
      last = await this.screen();
      if (pattern.test(last)) return last;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`the terminal never showed ${pattern} within ${timeoutMs} ms; it shows:\n${last.replace(/\n{3,}/g, '\n\n')}`);
  }

  async close(): Promise<void> {
    await run('tmux', ['kill-session', '-t', this.name]).catch(() => undefined);
  }
}
