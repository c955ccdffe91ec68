import { expect } from 'chai';
import { csvMoney, toCsv } from '../../../control-plane/console/csv.js';

describe('console CSV', () => {
  it('quotes commas, quotes and line breaks, and ends every line with CRLF', () => {
    expect(
      toCsv(
        ['a', 'b'],
        [
          ['x,y', 'say "hi"'],
          ['two\nlines', 3],
          [null, undefined],
        ],
      ),
    ).to.equal('a,b\r\n"x,y","say ""hi"""\r\n"two\nlines",3\r\n,\r\n');
  });

  it('turns text a spreadsheet would run as a formula into plain text', () => {
    expect(toCsv(['name'], [['=HYPERLINK("http://x")'], ['+1'], ['-2'], ['@SUM(A1)'], ['plain']])).to.equal(
      'name\r\n"\'=HYPERLINK(""http://x"")"\r\n\'+1\r\n\'-2\r\n\'@SUM(A1)\r\nplain\r\n',
    );
  });

  it('quotes a cell holding any separator, so no locale splits it into a formula cell (security finding 12)', () => {
    expect(toCsv(['name'], [['x;=1+1'], ['a\t=2'], ['b,=3'], ['c|d']])).to.equal('name\r\n"x;=1+1"\r\n"a\t=2"\r\n"b,=3"\r\nc|d\r\n');
    // A formula start is neutralised and, when it also holds a separator, quoted as well.
    expect(toCsv(['name'], [['=1;2']])).to.equal('name\r\n"\'=1;2"\r\n');
  });

  it('writes money with the ledger’s nine decimals, never in exponent form', () => {
    expect(csvMoney(0.000000033)).to.equal('0.000000033');
    expect(csvMoney(12.5)).to.equal('12.500000000');
  });
});
