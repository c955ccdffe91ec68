import pg from 'pg';
import type { Database, Queryable, QueryOptions } from './database.js';

const INT8_OID = 20;

/** int8 as a JS number, like PGlite: counts and ids here stay far below 2^53. */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (oid === INT8_OID) return (value: string) => Number(value);
    return (format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text')) as (value: string) => unknown;
  },
};

export async function openPostgres(connectionString: string): Promise<Database> {
  // A server that does not answer (a network cut, not a refusal) fails a request in 5 s rather than hanging it.
  const pool = new pg.Pool({ connectionString, max: 10, types, connectionTimeoutMillis: 5_000 });
  // An idle client's connection died (server restart, admin termination, or a
  // DROP DATABASE racing pool.end(), which resolves before sockets close). The
  // pool has already dropped it and the next query reconnects; without a
  // listener, pg re-emits the error as an uncaught exception and kills the process.
  pool.on('error', () => undefined);
  // Fail at start-up, not on the first request, when the server is unreachable.
  const probe = await pool.connect();
  probe.release();

  const query = async <R extends object>(client: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[], options?: QueryOptions) => {
    const values = params as unknown[] | undefined;
    return (await (options?.name ? client.query({ name: options.name, text: sql, values }) : client.query(sql, values))).rows as R[];
  };

  return {
    kind: 'postgres',
    query: (sql, params, options) => query(pool, sql, params, options),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async transaction(fn) {
      const client = await pool.connect();
      // A checked-out client has no error listener of the pool's: a connection lost between two
      // statements (the server restarting while the service awaits something else) would be emitted
      // with none, an uncaught exception that ends the process. Heard here, the next statement fails
      // instead, and the broken client is destroyed rather than pooled.
      let lost: Error | undefined;
      const onLost = (err: Error) => {
        lost = err;
      };
      client.on('error', onLost);
      const tx: Queryable = { query: (sql, params, options) => query(client, sql, params, options) };
      try {
        await client.query('BEGIN');
        const result = await fn(tx);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.off('error', onLost);
        client.release(lost);
      }
    },
    // A dedicated pooled client holds the LISTEN; if its connection dies the
    // listener is woken once and the caller's polling carries on alone.
    async listen(channel, onNotify) {
      const client = await pool.connect();
      const onNotification = (msg: pg.Notification) => {
        if (msg.channel === channel) onNotify();
      };
      let broken = false;
      const onError = () => {
        broken = true;
        onNotify();
      };
      client.on('notification', onNotification);
      client.on('error', onError);
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
      let released = false;
      return async () => {
        if (released) return;
        released = true;
        client.off('notification', onNotification);
        await client.query(`UNLISTEN ${client.escapeIdentifier(channel)}`).catch(() => undefined);
        client.off('error', onError);
        client.release(broken);
      };
    },
    async exec(sql) {
      await pool.query(sql);
    },
    close: () => pool.end(),
  };
}
