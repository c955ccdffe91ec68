import { expect } from 'chai';
import { bedrockOrigin } from '../../../../../shared/bedrock-endpoint.js';
import { bedrockPath } from '../../../../../proxy/wire/bedrock/endpoint.js';
import { chatUsageOf } from '../../../../../proxy/wire/bedrock/converse-answer.js';
import { chatUsageReader } from '../../../../../proxy/wire/chat/usage.js';
import type { JsonObject } from '../../../../../shared/json.js';

/** Converse's usage as the proxy bills it: made Chat's (converse-answer.ts), read by the Chat reader. */
const converseUsage = (u: JsonObject) => chatUsageReader.fromAnswer(chatUsageOf(u), Buffer.alloc(0), () => undefined);

describe('Bedrock endpoints', () => {
  it("goes to the region's public host unless the provider or the environment names another", () => {
    expect(bedrockOrigin('eu-west-3', undefined, {})).to.equal('https://bedrock-runtime.eu-west-3.amazonaws.com');
    expect(bedrockOrigin('eu-west-3', undefined, { AWS_ENDPOINT_URL_BEDROCK_RUNTIME: 'https://vpce-1.bedrock-runtime.example/' })).to.equal(
      'https://vpce-1.bedrock-runtime.example',
    );
    expect(bedrockOrigin('eu-west-3', 'http://127.0.0.1:9100', { AWS_ENDPOINT_URL_BEDROCK_RUNTIME: 'https://other.example' })).to.equal(
      'http://127.0.0.1:9100',
    );
  });

  it('escapes a model id the way the AWS SDKs do: `:` of versions, `/` of ARNs', () => {
    expect(bedrockPath('anthropic.claude-sonnet-4-5-20250929-v1:0', 'invoke-with-response-stream')).to.equal(
      '/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream',
    );
    expect(bedrockPath("arn:aws:bedrock:us-east-1:123:inference-profile/us.x(1)!'*", 'converse')).to.equal(
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123%3Ainference-profile%2Fus.x%281%29%21%27%2A/converse',
    );
  });
});

describe('Converse usage', () => {
  it('is read as Bedrock reports it: input apart from cache reads and writes, writes at the 5-minute price', () => {
    expect(
      converseUsage({ inputTokens: 12, outputTokens: 30, totalTokens: 1342, cacheReadInputTokens: 1000, cacheWriteInputTokens: 300 }),
    ).to.deep.equal({
      inputTokens: 12,
      cacheReadTokens: 1000,
      cacheWrite5mTokens: 300,
      cacheWrite1hTokens: 0,
      outputTokens: 30,
      reasoningTokens: 0,
      webSearchRequests: 0,
    });
  });

  it('is no usage at all when a count is malformed, so the call bills its hold', () => {
    expect(converseUsage({ inputTokens: 12, outputTokens: -3 })).to.equal(undefined);
    expect(converseUsage({ inputTokens: '12', outputTokens: 3 })).to.equal(undefined);
  });
});
