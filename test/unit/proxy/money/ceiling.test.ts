import { expect } from 'chai';
import type { WireFormat } from '../../../../proxy/call.js';
import { lowerCeiling, withCeilingMember } from '../../../../proxy/money/ceiling.js';
import type { UpstreamCall } from '../../../../proxy/wire/index.js';
import type { ParsedCall } from '../../../../proxy/call.js';

function upstream(format: WireFormat, body: string): UpstreamCall {
  return {
    origin: 'http://provider.test',
    path: '/v1/x',
    body: Buffer.from(body),
    authHeader: 'authorization',
    dropUsageChunk: false,
    format,
    translate: undefined,
    extraHeaders: undefined,
    dropped: [],
  };
}

/** The client's call as parsed: only its top level matters here. */
const callOf = (body: string) => ({ body: JSON.parse(body) as Record<string, unknown> }) as ParsedCall;
const add = (format: WireFormat, body: string, tokens: number) => withCeilingMember(upstream(format, body), callOf(body), tokens);

/** What the parse-and-write path makes of the same request: the reference the byte path must agree with. */
function parsedWay(format: WireFormat, body: string, tokens: number): unknown {
  const up = upstream(format, body);
  lowerCeiling(up, tokens);
  return JSON.parse(up.body.toString('utf8'));
}

describe('proxy money: a ceiling added to a request that names none, without parsing it again', () => {
  const bodies = [
    '{"model":"tg/x","messages":[{"role":"user","content":"hi"}]}',
    '  \n{ "model" : "tg/x", "stream": true, "messages": [] }\n',
    '{}',
    '{ }',
    '{"model":"tg/x","messages":[{"role":"user","content":"é ✓ \\u00e9 {\\"nested\\": 1}"}]}',
  ];

  for (const body of bodies) {
    it(`Chat: adds max_completion_tokens as the parse would, leaving every other byte (${JSON.stringify(body.slice(0, 24))}…)`, () => {
      const added = add('chat', body, 4096);
      expect(added, 'the byte path applies').to.not.equal(undefined);
      expect(JSON.parse(added!.toString('utf8'))).to.deep.equal(parsedWay('chat', body, 4096));
      expect(
        added!
          .toString('utf8')
          .replace('"max_completion_tokens":4096', '')
          .replace(/^(\s*\{),/, '$1'),
      ).to.equal(body);
    });
  }

  it('Responses: adds max_output_tokens', () => {
    const body = '{"model":"tg/x","input":"hi"}';
    expect(JSON.parse(add('responses', body, 512)!.toString('utf8'))).to.deep.equal(parsedWay('responses', body, 512));
  });

  it('leaves to the parse a request whose top level has a ceiling member at all (a null one)', () => {
    expect(add('chat', '{"model":"tg/x","max_tokens":null,"messages":[]}', 10)).to.equal(undefined);
    expect(add('chat', '{"model":"tg/x","max_completion_tokens":null,"messages":[]}', 10)).to.equal(undefined);
    // A ceiling name deeper down (a tool's schema) is not the request's: the byte path applies.
    const tool = '{"messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"max_tokens":{}}}}}]}';
    expect(JSON.parse(add('chat', tool, 10)!.toString('utf8'))).to.deep.equal(parsedWay('chat', tool, 10));
    expect(add('responses', '{"input":"x","max_output_tokens":null}', 10)).to.equal(undefined);
  });

  it('leaves to the parse the formats whose ceiling is nested or always sent (Gemini, Messages)', () => {
    expect(add('gemini', '{"contents":[]}', 10)).to.equal(undefined);
    expect(add('messages', '{"model":"tg/x","messages":[]}', 10)).to.equal(undefined);
  });

  it("leaves to the parse a translated request (its bytes are the translation's)", () => {
    const body = '{"model":"tg/x","messages":[]}';
    const up = { ...upstream('chat', body), translate: {} as UpstreamCall['translate'] };
    expect(withCeilingMember(up, callOf(body), 10)).to.equal(undefined);
  });

  it('leaves to the parse what is not a JSON object', () => {
    expect(withCeilingMember(upstream('chat', '[1,2]'), callOf('{}'), 10)).to.equal(undefined);
  });
});
