import { z } from 'zod';

/**
 * What a change-feed row names: `subject_id` is the id whose cached key
 * decisions are stale — a key, a team, a workspace or a user.
 */
export const changeTopicSchema = z.enum(['key', 'team', 'workspace', 'user']);
export type ChangeTopic = z.infer<typeof changeTopicSchema>;

export const changeEventSchema = z.object({
  id: z.number().int().positive(),
  topic: changeTopicSchema,
  subject_id: z.string(),
  /** When the change was recorded (ms since the epoch), so a proxy can tell how late it heard of it. */
  at: z.number().optional(),
});
export type ChangeEvent = z.infer<typeof changeEventSchema>;

/**
 * Most events one `GET /internal/changes` answers. A proxy that receives a
 * full page cannot know what lies beyond it until its next read, so it marks
 * every cached key answer for refresh (still usable in an outage).
 */
export const CHANGE_FEED_PAGE_SIZE = 1000;

/** `GET /internal/changes?after=n`: the events after n, oldest first, at most a page. */
export const changePageSchema = z.object({ events: z.array(changeEventSchema).max(CHANGE_FEED_PAGE_SIZE) });

/** `GET /internal/changes/version`, and the `ready` frame that opens the push stream. */
export const changeVersionSchema = z.object({ version: z.number().int().nonnegative() });
