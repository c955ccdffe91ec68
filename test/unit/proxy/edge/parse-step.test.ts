import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import { AppError } from '../../../../shared/errors.js';
import { parseBody } from '../../../../proxy/edge/steps/parse.js';
import { newCallState } from '../../../../proxy/edge/steps/step.js';
import type { WireFormat } from '../../../../proxy/call.js';
import { fakeDeps, fakeRequest, fakeTiming } from './fakes.js';

function parse(body: string, format: WireFormat = 'chat', headers: Record<string, string> = {}) {
  const { deps } = fakeDeps();
  const req = fakeRequest(headers);
  const s = newCallState(req, {} as ServerResponse, { format, slug: 'acme', action: 'call' }, fakeTiming());
  const out = parseBody(s, deps);
  req.end(body);
  return {
    s,
    deps,
    out: out.then(
      (v) => v,
      (e: unknown) => e,
    ),
  };
}

describe('edge step parse: the body read and checked by its format', () => {
  it('writes the parsed call (alias, stream, max tokens) and goes on', async () => {
    const { s, out } = parse(JSON.stringify({ model: 'tg/sonnet', messages: [], stream: true, max_tokens: 7 }));
    expect(await out).to.equal(undefined);
    expect(s.call).to.include({ alias: 'tg/sonnet', stream: true, maxTokens: 7, choices: 1 });
  });

  it('400 for a body that is not JSON or lacks the model', async () => {
    for (const body of ['{', JSON.stringify({ messages: [] })]) {
      const err = await parse(body).out;
      expect(err).to.be.instanceOf(AppError).with.property('status', 400);
    }
  });

  it('413 for a body over the configured limit, whether declared or sent', async () => {
    const { deps } = fakeDeps();
    const limit = deps.config.proxy.maxBodyBytes;
    const declared = await parse('{}', 'chat', { 'content-length': String(limit + 1) }).out;
    expect(declared).to.be.instanceOf(AppError).with.property('status', 413);
    const sent = await parse('x'.repeat(limit + 1)).out;
    expect(sent).to.be.instanceOf(AppError).with.property('status', 413);
  });

  it('400 for a Messages call without anthropic-version (the format decides its own rules)', async () => {
    const err = await parse(JSON.stringify({ model: 'tg/sonnet', messages: [], max_tokens: 5 }), 'messages').out;
    expect(err).to.be.instanceOf(AppError).with.property('status', 400);
  });
});
