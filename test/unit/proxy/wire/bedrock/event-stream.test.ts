import { expect } from 'chai';
import fc from 'fast-check';
import { crc32 } from 'node:zlib';
import { createEventStreamReader, createEventStreamWriter, MalformedEventStream } from '../../../../../proxy/wire/bedrock/event-stream.js';

const writer = createEventStreamWriter();
const headers = { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' };

function messages(n: number): Buffer[] {
  return Array.from({ length: n }, (_, i) => writer.message(headers, Buffer.from(JSON.stringify({ i, text: 'x'.repeat(i * 7) }))));
}

/** The bytes in pieces of `size` (the last shorter): every size cuts messages somewhere else. */
function pieces(bytes: Buffer, size: number): Buffer[] {
  return Array.from({ length: Math.ceil(bytes.length / size) }, (_, k) => bytes.subarray(k * size, (k + 1) * size));
}

describe('AWS event stream framing', () => {
  it('writes the framing AWS documents: lengths, CRC32s of prelude and message, string headers (type 7)', () => {
    const body = Buffer.from('{"a":1}');
    const m = writer.message({ ':event-type': 'chunk' }, body);
    const headerBytes = Buffer.concat([Buffer.from([11]), Buffer.from(':event-type'), Buffer.from([7, 0, 5]), Buffer.from('chunk')]);
    expect(m.readUInt32BE(0)).to.equal(m.length);
    expect(m.readUInt32BE(4)).to.equal(headerBytes.length);
    expect(m.readUInt32BE(8)).to.equal(crc32(m.subarray(0, 8)));
    expect(m.subarray(12, 12 + headerBytes.length)).to.deep.equal(headerBytes);
    expect(m.subarray(12 + headerBytes.length, m.length - 4)).to.deep.equal(body);
    expect(m.readUInt32BE(m.length - 4)).to.equal(crc32(m.subarray(0, m.length - 4)));
  });

  it('reads every message whole however the bytes were cut', () => {
    const all = messages(6);
    const bytes = Buffer.concat(all);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: bytes.length }), (size) => {
        const reader = createEventStreamReader();
        const got = pieces(bytes, size).flatMap((piece) => reader.push(piece));
        reader.end();
        expect(got.map((m) => JSON.parse(Buffer.from(m.body).toString()) as { i: number }).map((b) => b.i)).to.deep.equal([0, 1, 2, 3, 4, 5]);
        expect(got[0]!.headers).to.deep.equal(headers);
      }),
    );
  });

  it('refuses a message whose checksum does not match', () => {
    const [first] = messages(1);
    const broken = Buffer.from(first!);
    broken[broken.length - 6]! ^= 0x01;
    expect(() => createEventStreamReader().push(broken)).to.throw(MalformedEventStream, /checksum/);
  });

  it('refuses a prelude claiming an impossible length instead of buffering for it', () => {
    const bogus = Buffer.alloc(12);
    bogus.writeUInt32BE(0xfffffff0, 0);
    expect(() => createEventStreamReader().push(bogus)).to.throw(MalformedEventStream, /length/);
    bogus.writeUInt32BE(4, 0);
    expect(() => createEventStreamReader().push(bogus)).to.throw(MalformedEventStream, /length/);
  });

  it('refuses a stream that ends inside a message', () => {
    const [first] = messages(1);
    const reader = createEventStreamReader();
    expect(reader.push(first!.subarray(0, 20))).to.deep.equal([]);
    expect(() => reader.end()).to.throw(MalformedEventStream, /unfinished/);
  });
});
