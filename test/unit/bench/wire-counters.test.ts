import { expect } from 'chai';
import { causeIn } from '../../../bench/lib/ledger-cp.js';
import { RespCounter } from '../../../bench/lib/redis-counter.js';
import { endFrames, eventsAsked, TickReader, tickFrame } from '../../../bench/lib/ticks.js';

describe('bench wire counters', () => {
  describe('ticking streams', () => {
    it('reads back the stamp of every event, whatever the chunks cut', () => {
      const stream = tickFrame(123456789n) + tickFrame(987654321012n) + endFrames(2);
      for (const size of [1, 7, 50, stream.length]) {
        const reader = new TickReader();
        const stamps: bigint[] = [];
        for (let i = 0; i < stream.length; i += size) stamps.push(...reader.read(stream.slice(i, i + size)));
        expect(stamps, `chunks of ${size}`).to.deep.equal([123456789n, 987654321012n]);
      }
    });

    it('ends a stream with a usage chunk and [DONE], as a provider does', () => {
      const end = endFrames(60);
      expect(end).to.contain('"completion_tokens":120');
      expect(end.endsWith('data: [DONE]\n\n')).to.equal(true);
    });

    it('takes the event count from max_tokens, bounded, and one event when the body names none', () => {
      expect(eventsAsked('{"max_tokens":60}')).to.equal(60);
      expect(eventsAsked('{"max_tokens":1000000}')).to.equal(3600);
      expect(eventsAsked('{"max_tokens":-3}')).to.equal(1);
      expect(eventsAsked('not json')).to.equal(1);
    });
  });

  describe('Redis command counter', () => {
    const resp = (...parts: string[]) => `*${parts.length}\r\n${parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('')}`;

    it('counts each command of a pipeline by name, across arbitrary cuts', () => {
      const wire = Buffer.from(resp('evalsha', 'abc', '1', 'k\r\n*2') + resp('HGET', 'h', 'f') + resp('EVALSHA', 'abc', '0'));
      for (const size of [1, 3, 16, wire.length]) {
        const c = new RespCounter();
        for (let i = 0; i < wire.length; i += size) c.feed(wire.subarray(i, i + size));
        expect(c.commands, `chunks of ${size}`).to.equal(3);
        expect(c.byCommand).to.deep.equal({ EVALSHA: 2, HGET: 1 });
      }
    });

    it('counts an inline command too', () => {
      const c = new RespCounter();
      c.feed(Buffer.from('PING\r\n'));
      expect(c.byCommand).to.deep.equal({ PING: 1 });
    });
  });

  it("names the last error in a control plane's JSON log, so a 500 says why", () => {
    const log =
      'Tollgate control plane on http://127.0.0.1:1\n' +
      '{"level":50,"err":{"type":"DatabaseError","message":"could not serialize access"},"msg":"x"}\n' +
      '{"level":50,"err":{"type":"DatabaseError","message":"deadlock detected","stack":"…"},"msg":"console request failed"}\n';
    expect(causeIn(log)).to.equal('DatabaseError: deadlock detected');
    expect(causeIn('nothing here')).to.equal('no error logged');
  });
});
