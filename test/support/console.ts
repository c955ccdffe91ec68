import type { ControlPlaneDeps } from '../../control-plane/deps.js';
import type { MembershipStatus, Role } from '../../control-plane/domain.js';
import { openSession } from '../../control-plane/services/auth/sessions.js';
import { membership_insert, membership_set_status } from '../../control-plane/stores/memberships.js';
import { user_insert } from '../../control-plane/stores/users.js';
import { call } from './control-plane.js';

let counter = 0;

export interface TestMember {
  user_id: string;
  user_name: string;
  /** A console token for this user; refused while the membership is inactive. */
  token: string;
}

/** Adds a user to an org with the given role (default member) and opens a console session for them. */
export async function addMember(
  deps: ControlPlaneDeps,
  orgId: string,
  options: { role?: Role; status?: MembershipStatus; userName?: string } = {},
): Promise<TestMember> {
  counter += 1;
  const userName = options.userName ?? `user${counter}-${process.pid}@example.test`;
  return deps.db.transaction(async (tx) => {
    const user = await user_insert(
      tx,
      orgId,
      'scim',
      {
        user_name: userName,
        external_id: null,
        given_name: null,
        family_name: null,
        display_name: null,
        emails: [{ value: userName, primary: true }],
        active: true,
      },
      deps.clock.now(),
    );
    await membership_insert(tx, { org_id: orgId, user_id: user.id, role: options.role ?? 'member', status: 'active' });
    const session = await openSession(deps, tx, orgId, user.id);
    if (options.status === 'inactive') {
      await membership_set_status(tx, orgId, user.id, 'inactive', deps.clock.now());
    }
    return { user_id: user.id, user_name: userName, token: session.token };
  });
}

/** A console API call that must succeed; returns the body. */
export async function ok(
  url: string,
  init: Parameters<typeof call>[1],
  expected = 200,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any> {
  const res = await call(url, init);
  if (res.status !== expected) {
    throw new Error(`${init?.method ?? 'GET'} ${url}: expected ${expected}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body;
}
