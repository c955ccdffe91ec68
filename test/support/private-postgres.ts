import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './processes.js';

/**
 * A PostgreSQL server of the test's own: initdb into a temporary directory,
 * started with pg_ctl on a free port. The cluster faults restart and stop
 * it; the machine's shared server (the one every other suite and engineer
 * uses) is never touched. initdb refuses to run as root, so as root the
 * server runs as the `postgres` OS user.
 */
export interface PrivatePostgres {
  /** A connection string to a database of this server. */
  url(database: string): string;
  createDatabase(name: string): Promise<string>;
  /** `pg_ctl restart -m fast`: sessions are cut, the server is back when this resolves. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

const BIN_DIRS = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'];

/** Where initdb and pg_ctl are, or undefined when this machine has no PostgreSQL server binaries. */
export function postgresBinaries(): string | undefined {
  return BIN_DIRS.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl')));
}

export async function startPrivatePostgres(bin: string): Promise<PrivatePostgres> {
  const root = mkdtempSync(join(tmpdir(), 'tollgate-pg-'));
  const data = join(root, 'data');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? osUser('postgres') : undefined;
  if (owner) chownSync(root, owner.uid, owner.gid);
  // Asynchronous: the test's traffic keeps flowing while the server stops and starts.
  const run = (tool: string, args: string[]) =>
    new Promise<void>((resolve, reject) =>
      execFile(join(bin, tool), args, { cwd: root, ...(owner ?? {}) }, (err, stdout, stderr) =>
        err ? reject(new Error(`${tool} ${args.join(' ')} failed: ${stderr}${stdout}`, { cause: err })) : resolve(),
      ),
    );
  await run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  // The socket goes in the test's directory; fsync off: nothing here must survive a machine crash.
  const serverOptions = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const pgCtl = (...args: string[]) => run('pg_ctl', ['-D', data, '-l', join(root, 'log'), '-w', '-t', '60', ...args]);
  await pgCtl('-o', serverOptions, 'start');
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    url,
    async createDatabase(name) {
      const admin = new pg.Client({ connectionString: url('postgres') });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    restart: () => pgCtl('-m', 'fast', '-o', serverOptions, 'restart'),
    stop: () => pgCtl('-m', 'fast', 'stop'),
    start: () => pgCtl('-o', serverOptions, 'start'),
    async close() {
      await pgCtl('-m', 'immediate', 'stop').catch(() => undefined);
      rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    },
  };
}

function osUser(name: string): { uid: number; gid: number } {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) throw new Error(`running PostgreSQL as root needs the "${name}" OS user`);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
