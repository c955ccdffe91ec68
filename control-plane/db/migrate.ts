import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packagePath } from '../../shared/package-root.js';
import type { Database } from './database.js';

export const MIGRATIONS_DIR = packagePath('migrations');

/** Arbitrary constant: serializes migration runs of several control planes. */
const MIGRATION_LOCK = 7_468_211;

/**
 * Applies every `migrations/NNN_name.sql` not yet recorded, in name order,
 * each in its own transaction. Files are append-only: an applied file is
 * never edited, a change is a new file.
 */
export async function migrate(db: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const files = readdirSync(dir)
    .filter((f) => /^\d+_[\w-]+\.sql$/.test(f))
    .sort();
  const applied: string[] = [];
  for (const file of files) {
    const sql = readFileSync(join(dir, file), 'utf8');
    const done = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE name = $1', [file]);
      if (seen.length) return false;
      // Statements are split on lines ending a statement so one file can hold many.
      for (const statement of splitStatements(sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      return true;
    });
    if (done) applied.push(file);
  }
  return applied;
}

/** Splits on `;` at end of line; migrations keep one statement per `;`-terminated block. */
function splitStatements(sql: string): string[] {
  return sql
    .replace(/--[^\n]*\n/g, '\n')
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}
