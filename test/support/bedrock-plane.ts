import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningProxy } from '../../proxy/runtime.js';
import { isolateAwsEnvironment } from './aws-environment.js';
import { TEST_MODELS_FILE } from './control-plane.js';
import { startDataPlane, startTestProxy, type DataPlane } from './data-plane.js';
import { startFakeBedrock, type FakeBedrock } from './fake-bedrock/index.js';
import type { StoreContext } from './stores.js';

/** The AWS identity the proxy signs with (from the environment's credentials): the fake Bedrock accepts it. */
export const PROXY_AWS_IDENTITY = { accessKeyId: 'AKIDTOLLGATE', secretAccessKey: 'tollgate/proxy+secret' };

/** A data plane whose proxy reaches a fake Bedrock as the models file's `bedrock` provider. */
export interface BedrockPlane {
  dp: DataPlane;
  fake: FakeBedrock;
  /** The proxy with the Bedrock provider (dp.proxy has the plain test models file). */
  proxy: RunningProxy;
  close(): Promise<void>;
}

/**
 * The data plane of `store`, a fake Bedrock in us-east-1 signed for by the
 * proxy with PROXY_AWS_IDENTITY (the machine's own AWS credentials cut off),
 * and a proxy whose models file is the test one with the `bedrock` provider
 * and `models` added.
 */
export async function startBedrockPlane(store: StoreContext, models: Record<string, unknown>[]): Promise<BedrockPlane> {
  const restoreEnvironment = isolateAwsEnvironment();
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: PROXY_AWS_IDENTITY.accessKeyId, AWS_SECRET_ACCESS_KEY: PROXY_AWS_IDENTITY.secretAccessKey });
  const fake = await startFakeBedrock({ region: 'us-east-1', identities: [PROXY_AWS_IDENTITY] });
  const dp = await startDataPlane(store);
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bedrock-plane-'));
  const file = JSON.parse(readFileSync(TEST_MODELS_FILE, 'utf8')) as { providers: Record<string, unknown>; models: Record<string, unknown>[] };
  file.providers.bedrock = { kind: 'bedrock', region: 'us-east-1', endpoint_url: fake.url };
  file.models.push(...models);
  writeFileSync(join(dir, 'models.json'), JSON.stringify(file));
  const proxy = await startTestProxy(dp.cp, dp.fake, { MODELS_FILE: join(dir, 'models.json') });
  return {
    dp,
    fake,
    proxy,
    async close() {
      await proxy.close();
      await dp.close();
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
      restoreEnvironment();
    },
  };
}
