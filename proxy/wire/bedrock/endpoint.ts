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
