/**
 * The one seam between SQL and the rest of the code. Two drivers implement
 * it (PostgreSQL via pg, embedded PGlite); the same SQL runs on both.
 */
export interface Queryable {
  query<R extends object = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]>;
}

export interface QueryOptions {
  /**
   * Names a statement run on every usage report, so it is parsed and planned
   * once per connection rather than per call: about 1 ms of server CPU for
   * the settlement statement on PostgreSQL, 3–4 ms on PGlite. One name, one
   * SQL text.
   */
  name?: string;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `fn` in one transaction; commits on resolve, rolls back on throw. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * LISTENs on a channel; `onNotify` runs for each NOTIFY. Resolves to the
   * function that stops listening. Optional: callers fall back to polling.
   */
  listen?(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  /** The connection pool's state, where there is a pool (PostgreSQL), for the metrics. */
  poolStats?(): { total: number; idle: number; waiting: number };
  /** Runs a script of several statements (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | undefined;
  /** PGlite directory; undefined keeps the embedded store in memory (tests). */
  dataDir: string | undefined;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const { openPostgres } = await import('./postgres.js');
    return openPostgres(options.databaseUrl);
  }
  const { openPglite } = await import('./pglite.js');
  return openPglite(options.dataDir);
}
