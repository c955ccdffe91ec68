import type { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { createRequire } from 'node:module';

type VertexAuthClient = NonNullable<NonNullable<ConstructorParameters<typeof AnthropicVertex>[0]>['authClient']>;

/**
 * The vertex SDK's `AuthClient` for a gateway: the gateway key as a Google
 * access token that never expires, so the SDK sends `Authorization: Bearer
 * <key>` and looks for no Google credentials. It is built from the SDK's own
 * copy of google-auth-library (another major than the proxy's), whose class
 * the SDK's types name.
 */
export function gatewayKeyAuthClient(key: string): VertexAuthClient {
  const fromSdk = createRequire(createRequire(import.meta.url).resolve('@anthropic-ai/vertex-sdk'));
  const { OAuth2Client } = fromSdk('google-auth-library') as { OAuth2Client: new () => VertexAuthClient };
  const client = new OAuth2Client();
  client.setCredentials({ access_token: key, expiry_date: Date.now() + 365 * 86_400_000 });
  return client;
}
