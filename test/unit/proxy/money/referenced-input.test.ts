import { expect } from 'chai';
import type { ParsedCall } from '../../../../proxy/call.js';
import { refersToInput } from '../../../../proxy/money/referenced-input.js';

/** A parsed call of `body` as the parse step leaves it; `partial` as a worker's parse leaves a large body (its top level only). */
function call(body: Record<string, unknown>, partial?: { rest: Record<string, unknown> }): ParsedCall {
  const raw = Buffer.from(JSON.stringify(partial ? { ...body, ...partial.rest } : body));
  return { alias: 'm', stream: false, maxTokens: 10, choices: 1, body, raw, ...(partial ? { partial: true } : {}) };
}

const user = (content: unknown) => ({ model: 'm', messages: [{ role: 'user', content }] });

describe('money: which bodies refer to input they do not carry', () => {
  it('a body that carries all its input does not, whatever its text says of urls, files or prompts', () => {
    expect(refersToInput(call(user('Say hello.')))).to.equal(false);
    expect(refersToInput(call(user('the "prompt" key, a file_id, and {"url": "x"} quoted in text')))).to.equal(false);
    expect(refersToInput(call({ model: 'm', input: 'Go on.', prompt_cache_key: 'k', store: false }))).to.equal(false);
  });

  it('a previous response, a conversation or a stored prompt at the top level does', () => {
    expect(refersToInput(call({ model: 'm', input: 'x', previous_response_id: 'resp_1' }))).to.equal(true);
    expect(refersToInput(call({ model: 'm', input: 'x', conversation: 'conv_1' }))).to.equal(true);
    expect(refersToInput(call({ model: 'm', prompt: { id: 'pmpt_1' } }))).to.equal(true);
  });

  it('the same names below the top level, or empty at it, do not', () => {
    expect(refersToInput(call({ model: 'm', input: [{ role: 'user', content: 'x', prompt: { id: 'p' } }], conversation: null }))).to.equal(false);
    expect(refersToInput(call({ model: 'm', input: 'x', prompt: 'plain text' }))).to.equal(false);
  });

  it('a file id, a file or image URL, or an Anthropic source by URL or file anywhere in the body does; a data: URL does not', () => {
    expect(refersToInput(call(user([{ type: 'file', file: { file_id: 'file-1' } }])))).to.equal(true);
    expect(refersToInput(call(user([{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }])))).to.equal(true);
    expect(refersToInput(call(user([{ type: 'input_image', image_url: 'https://example.com/a.png' }])))).to.equal(true);
    expect(refersToInput(call(user([{ type: 'input_file', file_url: 'https://example.com/a.pdf' }])))).to.equal(true);
    expect(refersToInput(call(user([{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }])))).to.equal(true);
    expect(refersToInput(call(user([{ type: 'document', source: { type: 'file', file_id: 'file_1' } }])))).to.equal(true);
    expect(refersToInput(call(user([{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }])))).to.equal(false);
  });

  it('a large body parsed in a worker: a marker in the part not kept is taken as a reference, and no marker is none', () => {
    const top = { model: 'm' };
    expect(refersToInput(call(top, { rest: user([{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }]) }))).to.equal(true);
    expect(refersToInput(call(top, { rest: user([{ type: 'file', file: { file_id: 'file-1' } }]) }))).to.equal(true);
    expect(refersToInput(call(top, { rest: user('Say hello.') }))).to.equal(false);
  });
});
