/** The PostgreSQL server the bench's PostgreSQL scenarios create their own databases on. */
export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The URL of database `name` on that server. */
export function databaseUrl(name: string): string {
  const u = new URL(POSTGRES_URL);
  u.pathname = `/${name}`;
  return u.toString();
}
