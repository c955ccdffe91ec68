import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { AppError } from '../../../shared/errors.js';
import { createEdgeObserver } from '../../../proxy/observe.js';

/** An access log writing into an array, one parsed line per request. */
function capturedLog(): { lines: Record<string, unknown>[]; observer: ReturnType<typeof createEdgeObserver> } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, observer: createEdgeObserver({ accessLog: pino({ level: 'info' }, sink) }) };
}

const request = (method: string, url: string) => ({ method, url, headers: {} }) as IncomingMessage;

describe('proxy: the access log line', () => {
  it('records the method and path (never the query) of a request no route matched', async () => {
    const { lines, observer } = capturedLog();
    const call = observer.begin(request('DELETE', '/acme/v2/nothing?key=secret'), 'req_1');
    call.error = new AppError('not_found', 'No route.');
    observer.end(call, 404);
    await new Promise((r) => setImmediate(r));
    expect(lines[0]).to.include({ method: 'DELETE', path: '/acme/v2/nothing', route: 'unrouted', status: 404, reason: 'not_found' });
    expect(JSON.stringify(lines[0])).to.not.include('secret');
  });

  it('names the field a 400 refused, without the rest of the message', async () => {
    const { lines, observer } = capturedLog();
    const call = observer.begin(request('POST', '/acme/anthropic/v1/messages'), 'req_2');
    call.error = new AppError('invalid_input', 'messages.1.content.0.source: an image source is required.');
    observer.end(call, 400);
    const other = observer.begin(request('POST', '/acme/v1/chat/completions'), 'req_3');
    other.error = new AppError('invalid_input', 'The request body is not valid JSON.');
    observer.end(other, 400);
    await new Promise((r) => setImmediate(r));
    expect(lines[0]).to.include({ method: 'POST', reason: 'invalid_input', field: 'messages.1.content.0.source' });
    expect(lines[1]).to.include({ reason: 'invalid_input' });
    expect(lines[1]).to.not.have.property('field');
  });

  it('keeps at most 256 characters of a long path', async () => {
    const { lines, observer } = capturedLog();
    observer.end(observer.begin(request('GET', `/${'a'.repeat(1000)}`), 'req_4'), 404);
    await new Promise((r) => setImmediate(r));
    expect((lines[0]!.path as string).length).to.equal(256);
  });
});
