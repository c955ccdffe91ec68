import pg from 'pg';
import { randomBytes } from 'node:crypto';
import type { Database } from '../../control-plane/db/database.js';
import { openPglite } from '../../control-plane/db/pglite.js';
import { openPostgres } from '../../control-plane/db/postgres.js';
import { migrate } from '../../control-plane/db/migrate.js';
import { skipped } from './skips.js';

export type StoreName = 'pglite' | 'postgres';

/**
 * The PostgreSQL server tests use. Each test process creates its own
 * database on it (so parallel runs never collide) and drops it at exit.
 */
export const TEST_POSTGRES_URL = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

let pglite: Promise<Database> | undefined;
let postgres: Promise<Database | undefined> | undefined;
let postgresDbName: string | undefined;

async function openTestPostgres(): Promise<Database | undefined> {
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (err) {
    if (process.env.CI) {
      throw new Error(`PostgreSQL is required in CI but unreachable at ${TEST_POSTGRES_URL}: ${(err as Error).message}`, { cause: err });
    }
    return undefined;
  }
  try {
    postgresDbName = `tollgate_test_${process.pid}_${randomBytes(4).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${postgresDbName}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${postgresDbName}`;
  const db = await openPostgres(url.toString());
  await migrate(db);
  return db;
}

async function dropTestPostgres(): Promise<void> {
  if (!postgresDbName) return;
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${postgresDbName} WITH (FORCE)`);
  await admin.end();
}

/** The shared, migrated database of a store for this test process; undefined when PostgreSQL is absent. */
export async function openTestStore(name: StoreName): Promise<Database | undefined> {
  if (name === 'pglite') {
    pglite ??= openPglite(undefined).then(async (db) => {
      await migrate(db);
      return db;
    });
    return pglite;
  }
  postgres ??= openTestPostgres();
  return postgres;
}

/** Empties every table so each suite starts from nothing. */
export async function resetStore(db: Database): Promise<void> {
  const tables = await db.query<{ tablename: string }>(
    `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'`,
  );
  if (tables.length) {
    await db.exec(`TRUNCATE ${tables.map((t) => `"${t.tablename}"`).join(', ')} RESTART IDENTITY CASCADE`);
  }
}

export interface StoreContext {
  readonly name: StoreName;
  /** The suite's database, emptied before the suite runs. */
  readonly db: Database;
}

/**
 * Declares `fn`'s suite once per store: "<title> [pglite]" and
 * "<title> [postgres]". Without a reachable PostgreSQL (and not in CI) the
 * PostgreSQL copy is skipped and the skip is reported at the end of the run.
 */
export function describeEachStore(title: string, fn: (store: StoreContext) => void): void {
  for (const name of ['pglite', 'postgres'] as const) {
    describe(`${title} [${name}]`, function () {
      let db: Database | undefined;
      const context: StoreContext = {
        name,
        get db(): Database {
          if (!db) throw new Error('store not open yet: use it inside hooks and tests');
          return db;
        },
      };
      before(async function () {
        this.timeout(60_000);
        db = await openTestStore(name);
        if (!db) {
          skipped(`PostgreSQL copy of "${title}"`, `no server at ${TEST_POSTGRES_URL}`);
          this.skip();
        }
        await resetStore(db);
      });
      fn(context);
    });
  }
}

/** The URL of this process's PostgreSQL test database (for a child process, e.g. the CLI); undefined without PostgreSQL. */
export async function testPostgresUrl(): Promise<string | undefined> {
  if (!(await openTestStore('postgres')) || !postgresDbName) return undefined;
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${postgresDbName}`;
  return url.toString();
}

export async function closeTestStores(): Promise<void> {
  const dbs = await Promise.all([pglite, postgres]);
  for (const db of dbs) await db?.close();
  await dropTestPostgres();
}
