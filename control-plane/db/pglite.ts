import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { Database, Queryable } from './database.js';

/**
 * PGlite is one connection in this process: it queues concurrent queries and
 * transactions itself, so transactions serialize exactly as on a locked row.
 */
export async function openPglite(dataDir: string | undefined): Promise<Database> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  return {
    kind: 'pglite',
    query: async (sql, params) => (await db.query(sql, params as unknown[] | undefined)).rows as never[],
    transaction: (fn) =>
      db.transaction((t) => {
        const tx: Queryable = { query: async (sql, params) => (await t.query(sql, params as unknown[] | undefined)).rows as never[] };
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
