import { expect } from 'chai';
import { releaseBatch, releaseRecorded } from '../../../../proxy/money/hold-release.js';
import type { HoldStore, MoneySnapshot } from '../../../../proxy/money/holds.js';
import type { HoldKeepAlive } from '../../../../proxy/money/keep-alive.js';
import { settlementOf } from '../../../../proxy/money/settlement.js';
import { KEY, quietLogger, record, settlement } from './fakes.js';

const SNAPSHOT: MoneySnapshot = { workspaceId: 'ws1', balanceMicros: 5_000, balanceVersion: 2, keyId: KEY, keyRemainingMicros: 900, keyVersion: 3 };

function parts(release: () => void | Promise<void> = () => undefined) {
  const order: string[] = [];
  const released: { requestId: string; ids: unknown; snapshot: MoneySnapshot | undefined }[] = [];
  const holds = {
    release(requestId: string, ids: unknown, snapshot?: MoneySnapshot) {
      order.push('release');
      released.push({ requestId, ids, snapshot });
      return release();
    },
  } as unknown as HoldStore;
  const live = { remove: () => void order.push('off the live list') } as unknown as HoldKeepAlive;
  return { holds, live, order, released, logger: quietLogger() };
}

describe("money: hold release once the control plane recorded a call's usage", () => {
  it("takes the hold off the live list first, then releases it adopting the control plane's snapshot", () => {
    const { holds, live, order, released, logger } = parts();
    expect(releaseRecorded(holds, live, logger, settlement(1), SNAPSHOT)).to.equal(undefined);
    expect(order).to.deep.equal(['off the live list', 'release']);
    expect(released).to.deep.equal([
      {
        requestId: 'req_1',
        ids: { workspaceId: 'ws1', keyId: KEY },
        snapshot: SNAPSHOT,
      },
    ]);
  });

  it('releases without a snapshot when the control plane knew no workspace (an unknown key)', () => {
    const { holds, live, released, logger } = parts();
    expect(releaseRecorded(holds, live, logger, settlement(2), undefined)).to.equal(undefined);
    expect(released[0]!.snapshot).to.equal(undefined);
  });

  it('a release that fails (Redis) is logged and left to expire: the promise resolves', async () => {
    const { holds, live, logger } = parts(() => Promise.reject(new Error('ECONNRESET')));
    await releaseRecorded(holds, live, logger, settlement(3), SNAPSHOT);
    expect(logger.warnings).to.deep.equal(['hold release failed; it will expire']);
  });

  it("releases a recorded batch adopting each key's money from the per-key answer; a key the control plane did not know gets none", async () => {
    const { holds, live, released, logger } = parts();
    const other = { ...settlementOf(record(3)), keyId: '00000000-0000-4000-8000-0000000000ff' };
    const money = [{ key_id: KEY, workspace_id: 'ws1', balance_micros: 5_000, balance_version: 2, key_remaining_micros: 900, key_version: 3 }];
    await releaseBatch(holds, live, logger, [settlement(1), other, settlement(2)], money);
    expect(released.map((r) => [r.requestId, r.snapshot])).to.deep.equal([
      ['req_1', SNAPSHOT],
      ['req_3', undefined],
      ['req_2', SNAPSHOT],
    ]);
  });
});
