/**
 * Where a Bedrock provider's calls go: the provider's `endpoint_url` (a VPC
 * endpoint, a test's fake), else `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` (the
 * AWS SDKs' own override for this service), else the region's public host.
 */
export function bedrockOrigin(region: string, endpointUrl: string | undefined, env: NodeJS.ProcessEnv): string {
  const override = endpointUrl ?? env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME;
  if (override) return new URL(override).origin;
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

/** The operations of Bedrock's runtime API the proxy calls. */
export type BedrockOperation = 'invoke' | 'invoke-with-response-stream' | 'converse' | 'converse-stream';

/**
 * A model id as a path segment, escaped as the AWS SDKs escape it
 * (`encodeURIComponent` and `!'()*`): ids hold `:` (`…-v1:0`) and ARNs `/`.
 */
export function escapeModelId(modelId: string): string {
  return encodeURIComponent(modelId).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function bedrockPath(modelId: string, operation: BedrockOperation): string {
  return `/model/${escapeModelId(modelId)}/${operation}`;
}
