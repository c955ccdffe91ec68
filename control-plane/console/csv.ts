import type { Context } from 'koa';

type Cell = string | number | null | undefined;

/** Spreadsheets run a cell that starts like a formula; names come from users, so such text is quoted as text. */
const FORMULA_START = /^[=+\-@\t\r]/;

function cell(value: Cell): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'number' ? String(value) : FORMULA_START.test(value) ? `'${value}` : value;
  // `;` and tab too: spreadsheets in locales whose list separator is `;` (most of Europe) split there,
  // and `x;=1+1` unquoted would become a second cell holding a formula.
  if (/[",;\t\r\n]/.test(text)) text = `"${text.replaceAll('"', '""')}"`;
  return text;
}

/** Money in CSV keeps the ledger's nine decimals and never turns into 1e-7. */
export function csvMoney(usd: number): string {
  return usd.toFixed(9);
}

/** RFC 4180 CSV: a header row, CRLF line ends, quoted where needed. */
export function toCsv(header: string[], rows: Cell[][]): string {
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

/** Sends CSV as a download named `filename`. */
export function sendCsv(ctx: Context, filename: string, header: string[], rows: Cell[][]): void {
  ctx.set('Content-Type', 'text/csv; charset=utf-8');
  ctx.set('Content-Disposition', `attachment; filename="${filename.replace(/[^\w.-]/g, '_')}"`);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = toCsv(header, rows);
}
