import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { CliError } from './errors.js';

/**
 * Where a command's JSON answer goes. With --out the file is created before
 * any work is done (mode 0600, never over an existing file), so a refusal
 * happens before an org exists and a shell redirect can never empty a file
 * holding the only copy of a token.
 */
export interface Output {
  write(result: unknown): void;
  /** Removes the file made for an answer that never came. */
  abandon(): void;
}

export function openOutput(path: string | undefined): Output {
  if (path === undefined) {
    return {
      write: (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
      abandon: () => undefined,
    };
  }
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      throw new CliError(
        `${path} already exists; it is never overwritten (it may hold the only copy of a console token). Choose another --out file, or move that one away first.`,
      );
    }
    throw new CliError(`cannot create ${path}: ${code ?? (err as Error).message}`);
  }
  let open = true;
  return {
    write(result) {
      writeSync(fd, `${JSON.stringify(result, null, 2)}\n`);
      closeSync(fd);
      open = false;
    },
    abandon() {
      if (!open) return;
      closeSync(fd);
      rmSync(path, { force: true });
      open = false;
    },
  };
}
