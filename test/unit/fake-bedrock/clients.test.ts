import { expect } from 'chai';
import AnthropicBedrock from '@anthropic-ai/bedrock-sdk';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { startFakeBedrock, type FakeBedrock } from '../../support/fake-bedrock/index.js';

/** The official clients, unchanged, against the fake: it takes their signatures and answers in the shapes they read. */
describe('Bedrock fake, as the AWS and Anthropic clients see it', () => {
  const identity = { accessKeyId: 'AKIDCLIENT', secretAccessKey: 'client/secret+key', sessionToken: 'client-session' };
  const MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
  let fake: FakeBedrock;
  let aws: BedrockRuntimeClient;

  before(async () => {
    fake = await startFakeBedrock({ region: 'eu-central-1', identities: [identity] });
    aws = new BedrockRuntimeClient({ region: 'eu-central-1', endpoint: fake.url, credentials: identity, maxAttempts: 1 });
  });
  /** Claude Code's client for Bedrock, signing with the test's identity. */
  function anthropicClient(): AnthropicBedrock {
    return new AnthropicBedrock({
      baseURL: fake.url,
      awsRegion: 'eu-central-1',
      awsAccessKey: identity.accessKeyId,
      awsSecretKey: identity.secretAccessKey,
      awsSessionToken: identity.sessionToken,
      maxRetries: 0,
    });
  }

  after(async () => {
    aws.destroy();
    await fake.close();
  });

  it('takes the Anthropic Bedrock SDK signed call, with the model in the path and version and betas in the body', async () => {
    const client = anthropicClient();
    const message = await client.messages.create(
      { model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] },
      { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } },
    );
    expect(message.content[0]).to.deep.include({ type: 'text' });
    const seen = fake.requests.at(-1)!;
    expect(seen).to.deep.include({ operation: 'invoke', modelId: MODEL, caller: 'AKIDCLIENT' });
    // This SDK leaves the id's `:` as it is in the path; the AWS SDK escapes it (below): a Bedrock route takes both.
    expect(seen.rawPath).to.equal('/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke');
    // It copies its own `anthropic-version` header (a dated API version) into the body, which Bedrock takes beside `bedrock-2023-05-31`.
    expect(seen.body).to.deep.include({ anthropic_version: '2026-10-21', anthropic_beta: ['context-1m-2025-08-07'] });
    expect(seen.body).not.to.have.property('model');
  });

  it('streams to the Anthropic Bedrock SDK in the binary event stream, usage with cache reads and writes', async () => {
    fake.enqueue({ kind: 'ok', outputTokens: 6, cacheReadTokens: 40, cacheWriteTokens: 20 });
    const client = anthropicClient();
    const stream = client.messages.stream({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] });
    const final = await stream.finalMessage();
    expect(final.usage).to.deep.include({ output_tokens: 6, cache_read_input_tokens: 40, cache_creation_input_tokens: 20 });
    expect(fake.requests.at(-1)!.operation).to.equal('invoke-with-response-stream');
  });

  it('answers InvokeModel and InvokeModelWithResponseStream to the AWS SDK', async () => {
    const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    const whole = await aws.send(new InvokeModelCommand({ modelId: MODEL, body, contentType: 'application/json' }));
    expect(fake.requests.at(-1)!.rawPath).to.equal('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke');
    expect((JSON.parse(Buffer.from(whole.body).toString()) as { type: string }).type).to.equal('message');
    const streamed = await aws.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, body, contentType: 'application/json' }));
    const types: string[] = [];
    for await (const event of streamed.body!) types.push((JSON.parse(Buffer.from(event.chunk!.bytes!).toString()) as { type: string }).type);
    expect(types[0]).to.equal('message_start');
    expect(types.at(-1)).to.equal('message_stop');
  });

  it('answers Converse and ConverseStream with usage as Bedrock counts it', async () => {
    fake.enqueue({ kind: 'ok', outputTokens: 3, cacheReadTokens: 11, cacheWriteTokens: 5 }, { kind: 'ok', outputTokens: 4 });
    const input = {
      modelId: 'amazon.nova-pro-v1:0',
      messages: [{ role: 'user' as const, content: [{ text: 'abcdefgh' }] }],
      inferenceConfig: { maxTokens: 10 },
    };
    const whole = await aws.send(new ConverseCommand(input));
    expect(whole.output?.message?.content?.[0]?.text).to.equal('tok1 tok2 tok3');
    expect(whole.usage).to.deep.include({ inputTokens: 2, outputTokens: 3, cacheReadInputTokens: 11, cacheWriteInputTokens: 5, totalTokens: 21 });
    const streamed = await aws.send(new ConverseStreamCommand(input));
    let text = '';
    let usage: unknown;
    for await (const event of streamed.stream!) {
      if (event.contentBlockDelta) text += event.contentBlockDelta.delta?.text ?? '';
      if (event.metadata) usage = event.metadata.usage;
    }
    expect(text).to.equal('tok1 tok2 tok3 tok4');
    expect(usage).to.deep.include({ inputTokens: 2, outputTokens: 4 });
  });

  it('refuses a signature made with the wrong secret, as Bedrock does', async () => {
    const wrong = new BedrockRuntimeClient({
      region: 'eu-central-1',
      endpoint: fake.url,
      credentials: { ...identity, secretAccessKey: 'not-it' },
      maxAttempts: 1,
    });
    const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    const err = (await wrong.send(new InvokeModelCommand({ modelId: MODEL, body })).catch((e: unknown) => e)) as Error & {
      $metadata: { httpStatusCode: number };
    };
    wrong.destroy();
    expect(err.name).to.equal('InvalidSignatureException');
    expect(err.$metadata.httpStatusCode).to.equal(403);
  });

  it('refuses an InvokeModel body that names the model, as Bedrock does', async () => {
    const body = JSON.stringify({
      model: MODEL,
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const err = (await aws.send(new InvokeModelCommand({ modelId: MODEL, body })).catch((e: unknown) => e)) as Error;
    expect(err.name).to.equal('ValidationException');
    expect(err.message).to.include('extraneous key [model] is not permitted');
  });
});
