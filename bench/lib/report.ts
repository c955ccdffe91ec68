/** What a run collects: every figure goes to latest.json; the table shows the ones people compare. */

export interface Check {
  scenario: string;
  figure: string;
  value: number;
  target: string;
  /** undefined when the figure could not be measured (a system missing or failing). */
  pass: boolean | undefined;
  note?: string;
}

export class Report {
  readonly sections: { title: string; headers: string[]; rows: string[][]; notes: string[] }[] = [];
  readonly checks: Check[] = [];
  readonly data: Record<string, unknown> = {};

  section(title: string, headers: string[]): { row(...cells: string[]): void; note(text: string): void } {
    const s = { title, headers, rows: [] as string[][], notes: [] as string[] };
    this.sections.push(s);
    return { row: (...cells) => s.rows.push(cells), note: (text) => s.notes.push(text) };
  }

  check(c: Check): void {
    this.checks.push(c);
  }

  render(): string {
    const out: string[] = [];
    for (const s of this.sections) {
      out.push('', `== ${s.title}`);
      out.push(...renderTable(s.headers, s.rows));
      for (const n of s.notes) out.push(`   ${n}`);
    }
    if (this.checks.length) {
      out.push('', '== Targets (ratios within this run)');
      out.push(
        ...renderTable(
          ['scenario', 'figure', 'measured', 'target', 'result'],
          this.checks.map((c) => [
            c.scenario,
            c.figure,
            Number.isFinite(c.value) ? fmtNum(c.value) : 'n/a',
            c.target,
            c.pass === undefined ? `n/a${c.note ? ` (${c.note})` : ''}` : c.pass ? 'pass' : `short${c.note ? ` (${c.note})` : ''}`,
          ]),
        ),
      );
    }
    return out.join('\n');
  }
}

function renderTable(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

export function fmtNum(v: number): string {
  if (!Number.isFinite(v)) return 'n/a';
  const a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toLocaleString('en-US');
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

/** Microseconds as ms with enough digits to see tens of µs. */
export function fmtMs(us: number): string {
  return Number.isFinite(us) ? (us / 1000).toFixed(us < 10_000 ? 3 : 1) : 'n/a';
}

export function fmtMiB(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

export function ratio(a: number, b: number): number {
  return b > 0 && Number.isFinite(a) && Number.isFinite(b) ? a / b : NaN;
}
