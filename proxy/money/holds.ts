/**
 * Holds reserve a request's worst-case cost before it is forwarded (docs/design.md, money).
 *
 * The store keeps, per workspace and per key, the newest money snapshot any
 * proxy has seen (remaining micro-dollars with the database row version it
 * was read at) and the sum of live holds. A hold is admitted only if
 * `snapshot - held >= amount` on both (and never when that is zero or
 * less: an account driven below zero by a call billed above its hold refuses
 * the next one). When a call ends its hold becomes what it cost (`resize`):
 * the worst case was only needed while the answer was unknown. A hold is
 * released only after its usage is committed in the ledger, together with
 * adopting the snapshot the control plane answered; so every committed cost
 * is either inside the snapshot or still held, and the check never sees more
 * money than exists.
 */
import type { NowMs } from '../../shared/clock.js';

export interface MoneySnapshot {
  workspaceId: string;
  balanceMicros: number;
  balanceVersion: number;
  keyId: string;
  /** null: the key has no budget. */
  keyRemainingMicros: number | null;
  keyVersion: number;
}

/**
 * `lowered`: less than asked was held, because only that much was left
 * (never less than the floor the call gave); the call must fit in it.
 */
export type HoldOutcome = { ok: true; lowered?: number } | { ok: false; reason: 'balance' | 'budget' };

const FULL: HoldOutcome = { ok: true };

/**
 * What a lowered hold takes of the `left` it does not fit in: half, never
 * below its floor, so calls arriving together share what is left with
 * smaller ceilings instead of the first taking it all (the Redis store's
 * script does the same).
 */
export function shareOf(left: number, floor: number): number {
  return Math.max(floor, Math.floor(left / 2));
}

/** A hold this proxy knows to be owed: a call in flight, or a settled call the control plane has not yet acknowledged. */
export interface LiveHold {
  requestId: string;
  workspaceId: string;
  keyId: string;
  amountMicros: number;
  /** The key has a budget, so the hold is on the key's account too. */
  keyBudget: boolean;
}

export interface HoldStore {
  /**
   * In process the answer is immediate (no promise); only the Redis store
   * answers with one. With `floorMicros`, when `amountMicros` does not fit
   * but the floor does, a share of what is left is held instead (`lowered`, shareOf), in
   * the same atomic step, so concurrent holds never together exceed it.
   */
  hold(requestId: string, snapshot: MoneySnapshot, amountMicros: number, floorMicros?: number): HoldOutcome | Promise<HoldOutcome>;
  /**
   * Ends a hold; `snapshot`, when given, is the control plane's answer after
   * recording the usage. In process it is done at once (no promise).
   */
  release(requestId: string, ids: { workspaceId: string; keyId: string }, snapshot?: MoneySnapshot): void | Promise<void>;
  /**
   * A call ended: its hold becomes `amountMicros`, what the call cost, on
   * every account it is on; smaller than the worst case held so far, or
   * larger when the usage cost more (never refused: the money is spent).
   * A hold already released is left released. In process it is done at once.
   */
  resize(requestId: string, ids: { workspaceId: string; keyId: string }, amountMicros: number): void | Promise<void>;
  /** Pushes a live hold's expiry out by the TTL again: a long stream keeps its hold while it runs. */
  extend(requestId: string, ids: { workspaceId: string; keyId: string }): Promise<void>;
  /**
   * Puts holds back without checking the money: they are already owed (a
   * restarted proxy's unacknowledged settlements, or every live hold after
   * the shared store lost its data). A hold already there is left as it is.
   */
  reassert(holds: LiveHold[]): Promise<void>;
  close(): Promise<void>;
}

interface Account {
  base: number;
  version: number;
  held: number;
  holds: Map<string, { amount: number; expiresAt: number }>;
  /** No hold here expires before this: until then a lookup need not scan for expired holds. */
  sweepAt: number;
}

/** One process's holds: exact for a single proxy (REDIS_URL unset). */
export function createMemoryHoldStore(ttlMs: number, now: NowMs = Date.now): HoldStore {
  // Workspaces and keys in maps of their own, looked up by the id itself: no name is built per call.
  const workspaces = new Map<string, Account>();
  const keys = new Map<string, Account>();

  const account = (accounts: Map<string, Account>, id: string): Account => {
    let a = accounts.get(id);
    if (!a) {
      a = { base: 0, version: -1, held: 0, holds: new Map(), sweepAt: Infinity };
      accounts.set(id, a);
    }
    // Scanning every live hold on every call made each admission O(holds in
    // flight); only scan once the earliest expiry may have passed.
    if (a.sweepAt !== Infinity) {
      const t = now();
      if (t >= a.sweepAt) sweep(a, t);
    }
    return a;
  };
  const sweep = (a: Account, t: number): void => {
    let next = Infinity;
    for (const [rid, h] of a.holds) {
      if (h.expiresAt <= t) {
        a.held -= h.amount;
        a.holds.delete(rid);
      } else if (h.expiresAt < next) next = h.expiresAt;
    }
    a.sweepAt = next;
  };
  const adopt = (a: Account, base: number, version: number): void => {
    if (version > a.version) {
      a.base = base;
      a.version = version;
    }
  };
  const drop = (a: Account | undefined, requestId: string): void => {
    const h = a?.holds.get(requestId);
    if (a && h) {
      a.held -= h.amount;
      a.holds.delete(requestId);
    }
  };

  return {
    hold(requestId, s, asked, floor) {
      const ws = account(workspaces, s.workspaceId);
      adopt(ws, s.balanceMicros, s.balanceVersion);
      // At least a micro-dollar: an account at zero or below admits nothing, whatever the call may cost.
      const need = Math.max(1, Math.min(asked, floor ?? asked));
      let left = ws.base - ws.held;
      if (left < need) return { ok: false, reason: 'balance' };
      let key: Account | undefined;
      if (s.keyRemainingMicros !== null) {
        key = account(keys, s.keyId);
        adopt(key, s.keyRemainingMicros, s.keyVersion);
        left = Math.min(left, key.base - key.held);
        if (key.base - key.held < need) return { ok: false, reason: 'budget' };
      }
      const amount = asked <= left ? asked : shareOf(left, need);
      const expiresAt = now() + ttlMs;
      for (const a of [ws, key]) {
        if (!a) continue;
        a.held += amount;
        a.holds.set(requestId, { amount, expiresAt });
        if (expiresAt < a.sweepAt) a.sweepAt = expiresAt;
      }
      return amount < asked ? { ok: true, lowered: amount } : FULL;
    },
    release(requestId, ids, s) {
      drop(workspaces.get(ids.workspaceId), requestId);
      drop(keys.get(ids.keyId), requestId);
      if (s) {
        adopt(account(workspaces, s.workspaceId), s.balanceMicros, s.balanceVersion);
        if (s.keyRemainingMicros !== null) adopt(account(keys, s.keyId), s.keyRemainingMicros, s.keyVersion);
      }
    },
    resize(requestId, ids, amount) {
      for (const a of [workspaces.get(ids.workspaceId), keys.get(ids.keyId)]) {
        const h = a?.holds.get(requestId);
        if (a && h) {
          a.held += amount - h.amount;
          h.amount = amount;
        }
      }
    },
    async extend(requestId, ids) {
      const expiresAt = now() + ttlMs;
      for (const a of [workspaces.get(ids.workspaceId), keys.get(ids.keyId)]) {
        const h = a?.holds.get(requestId);
        if (h) h.expiresAt = expiresAt;
      }
    },
    async reassert(live) {
      const expiresAt = now() + ttlMs;
      for (const h of live) {
        for (const a of h.keyBudget ? [account(workspaces, h.workspaceId), account(keys, h.keyId)] : [account(workspaces, h.workspaceId)]) {
          if (a.holds.has(h.requestId)) continue;
          a.held += h.amountMicros;
          a.holds.set(h.requestId, { amount: h.amountMicros, expiresAt });
          if (expiresAt < a.sweepAt) a.sweepAt = expiresAt;
        }
      }
    },
    async close() {},
  };
}
