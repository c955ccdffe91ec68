import { expect } from 'chai';
import { createRequestIds, newRequestId as oneId, type RequestIds } from '../../../proxy/request-id.js';

const SOURCES: [string, () => RequestIds][] = [
  ['one at a time', () => oneId],
  ["the edge's source (random bytes drawn for hundreds at once)", createRequestIds],
];

for (const [name, source] of SOURCES)
  describe(`request ids, ${name}`, () => {
    let newRequestId: RequestIds;
    beforeEach(() => (newRequestId = source()));

    it('are req_ and 32 lowercase hex digits, the first 12 the time in ms', () => {
      const now = Date.UTC(2026, 10, 25, 12, 0, 0, 123);
      const id = newRequestId(now);
      expect(id).to.match(/^req_[0-9a-f]{32}$/);
      expect(parseInt(id.slice(4, 16), 16)).to.equal(now);
    });

    it('sort by the millisecond they were made in', () => {
      const t = Date.UTC(2026, 10, 25);
      const ids = [t + 1, t, t + 1000, t + 16 ** 3, t + 2].map((ms) => [ms, newRequestId(ms)] as const);
      const byId = [...ids].sort((a, b) => (a[1] < b[1] ? -1 : 1)).map(([ms]) => ms);
      expect(byId).to.deep.equal([t, t + 1, t + 2, t + 1000, t + 16 ** 3]);
    });

    it('never repeat within one millisecond (80 random bits each)', () => {
      const ids = new Set(Array.from({ length: 50_000 }, () => newRequestId(1_764_000_000_000)));
      expect(ids.size).to.equal(50_000);
    });

    it('keep their shape for a clock that reads before 1970 or between milliseconds', () => {
      expect(newRequestId(-5)).to.match(/^req_0{12}[0-9a-f]{20}$/);
      expect(newRequestId(1.75)).to.match(/^req_0{11}1[0-9a-f]{20}$/);
    });
  });
