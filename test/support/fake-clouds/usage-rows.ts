import type { RunningProxy } from '../../../proxy/runtime.js';
import type { TestControlPlane } from '../control-plane.js';
import { moneyOf, type SeededKey } from '../data-plane.js';

/** The key's money once every report this proxy took has settled and the spend stopped moving. */
export async function settled(proxy: RunningProxy, cp: TestControlPlane, key: SeededKey): Promise<{ spend: number }> {
  await proxy.drain();
  let last = await moneyOf(cp.deps, key);
  for (let quiet = 0; quiet < 5;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = await moneyOf(cp.deps, key);
    quiet = now.spend === last.spend ? quiet + 1 : 0;
    last = now;
  }
  return last;
}

export interface UsageRow {
  amount: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

/** The key's usage ledger rows, the amount as the ledger's exact text, once the proxy's reports have settled. */
export async function usageRows(proxy: RunningProxy, cp: TestControlPlane, key: SeededKey): Promise<UsageRow[]> {
  await settled(proxy, cp, key);
  return cp.deps.db.query<UsageRow>(
    `SELECT abs(amount_usd)::text AS amount, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens
       FROM ledger_entries WHERE key_id = $1 AND kind = 'usage'`,
    [key.keyId],
  );
}
