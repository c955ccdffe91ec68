import { mkdirSync } from 'node:fs';
import { PGlite, parse, protocol } from '@electric-sql/pglite';
import type { Database, Queryable } from './database.js';

/**
 * PostgreSQL's settings for the embedded store, passed at each start (not
 * written to the data directory's postgresql.conf). PGlite is one backend in
 * one WebAssembly memory, and PostgreSQL zeroes its shared memory at start,
 * so every megabyte of shared_buffers is a resident megabyte from the first
 * second: initdb's default of 128 MB was over half of `npm start`'s idle
 * memory. 16 MB holds the hot pages of the tables the proxy's calls touch
 * (keys, balances, the ledger's newest pages); colder pages come from the
 * operating system's file cache, not the disk.
 */
export const PGLITE_SETTINGS = ['shared_buffers=16MB', 'max_connections=8'];

/**
 * PGlite is one connection in this process: it queues concurrent queries and
 * transactions itself, so transactions serialize exactly as on a locked row.
 */
export async function openPglite(dataDir: string | undefined): Promise<Database> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const startParams = [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])];
  const db = await PGlite.create(dataDir, { startParams });
  const runNamed = namedStatements(db);
  return {
    kind: 'pglite',
    query: async (sql, params, options) =>
      options?.name
        ? // Like PGlite's own query: wait for any open transaction, then take the connection.
          db._runExclusiveTransaction(() => db._runExclusiveQuery(() => runNamed(options.name!, sql, params ?? [], true)))
        : ((await db.query(sql, params as unknown[] | undefined)).rows as never[]),
    transaction: (fn) =>
      db.transaction((t) => {
        const tx: Queryable = {
          query: async (sql, params, options) =>
            options?.name
              ? db._runExclusiveQuery(() => runNamed(options.name!, sql, params ?? [], false))
              : ((await t.query(sql, params as unknown[] | undefined)).rows as never[]),
        };
        return fn(tx);
      }),
    async listen(channel, onNotify) {
      const stop = await db.listen(channel, () => onNotify());
      return async () => {
        await stop().catch(() => undefined);
      };
    },
    async exec(sql) {
      await db.exec(sql);
    },
    close: () => db.close(),
  };
}

/**
 * Named statements over PGlite's wire protocol. `PGlite.query` parses,
 * describes and plans every statement anew (the unnamed statement); for the
 * settlement statement, run on every usage report, that was 3–4 ms of a
 * report's cost. Parsed once under its name, the statement is bound and
 * executed with its cached (generic) plan, as PostgreSQL does for a named
 * statement. The steps mirror `PGlite.query`'s: parse and describe once,
 * then bind, describe the portal, execute, and always sync.
 */
function namedStatements(db: PGlite) {
  const { serialize } = protocol;
  const prepared = new Map<string, { sql: string; types: number[] }>();
  const run = (message: Uint8Array) => db.execProtocolStream(message, { syncToFs: false });

  return async function runNamed<R>(name: string, sql: string, params: readonly unknown[], outsideTransaction: boolean): Promise<R[]> {
    let messages: Awaited<ReturnType<typeof run>>;
    try {
      let statement = prepared.get(name);
      if (statement && statement.sql !== sql) throw new Error(`statement name ${name} is already used by another statement`);
      if (!statement) {
        await run(serialize.parse({ name, text: sql }));
        statement = { sql, types: parse.parseDescribeStatementResults(await run(serialize.describe({ type: 'S', name }))) };
        prepared.set(name, statement);
      }
      const types = statement.types;
      const values = params.map((v, i) => {
        if (v === null || v === undefined) return null;
        const serializer = db.serializers[types[i]!];
        // As PGlite's own query does: a type without a serializer takes the value's text.
        return serializer ? serializer(v) : (v as { toString(): string }).toString();
      });
      messages = [
        ...(await run(serialize.bind({ statement: name, values }))),
        ...(await run(serialize.describe({ type: 'P' }))),
        ...(await run(serialize.execute({}))),
      ];
    } finally {
      await run(serialize.sync());
    }
    if (outsideTransaction) await db.syncToFs();
    return parse.parseResults(messages, db.parsers)[0]!.rows as R[];
  };
}
