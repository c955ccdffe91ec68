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
