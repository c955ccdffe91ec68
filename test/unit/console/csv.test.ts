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

  it('writes money with the ledger’s nine decimals, never in exponent form', () => {
    expect(csvMoney(0.000000033)).to.equal('0.000000033');
    expect(csvMoney(12.5)).to.equal('12.500000000');
  });
});
