import type { ChangeTopic } from '../../shared/contract/changes.js';
import type { Queryable } from '../db/database.js';

export async function change_feed_insert(q: Queryable, topic: ChangeTopic, subjectId: string): Promise<number> {
  const [row] = await q.query<{ id: number }>(`INSERT INTO change_feed (topic, subject_id) VALUES ($1, $2) RETURNING id`, [topic, subjectId]);
  return row!.id;
}

export async function change_feed_since(
  q: Queryable,
  afterId: number,
  limit: number,
): Promise<{ id: number; topic: ChangeTopic; subject_id: string; at: number }[]> {
  return q.query(
    `SELECT id, topic, subject_id, (extract(epoch FROM created_at) * 1000)::float8 AS at FROM change_feed WHERE id > $1 ORDER BY id LIMIT $2`,
    [afterId, limit],
    // Read on every poll and every NOTIFY while proxies listen: planned once.
    { name: 'change_feed_since' },
  );
}

export async function change_feed_latest(q: Queryable): Promise<number> {
  const [row] = await q.query<{ id: number }>(`SELECT COALESCE(max(id), 0)::bigint AS id FROM change_feed`);
  return Number(row!.id);
}

export const CHANGE_CHANNEL = 'tollgate_changes';

/**
 * Records a change and notifies listeners. NOTIFY is transactional: listeners
 * (every control-plane replica, and through them every proxy) hear of it only
 * once the change is committed.
 */
export async function change_feed_publish(q: Queryable, topic: ChangeTopic, subjectId: string): Promise<void> {
  const id = await change_feed_insert(q, topic, subjectId);
  await q.query(`SELECT pg_notify($1, $2)`, [CHANGE_CHANNEL, JSON.stringify({ id, topic, subject_id: subjectId })]);
}
