import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { packagePath } from '../../../shared/package-root.js';
import { ALL_TABLES } from '../../../shared/config-table.js';
import type { Setting } from '../../../shared/config-parsers.js';

/** The `| variable | default | meaning |` tables users read. */
const DOCS = ['README.md', 'docs/proxy.md', 'docs/operations.md'];

interface DocRow {
  file: string;
  names: string[];
  defaults: string;
}

/** Rows of every table headed `| variable | default |`; a row may name several variables, their defaults comma-separated in order. */
function docRows(file: string, markdown: string): DocRow[] {
  const rows: DocRow[] = [];
  let inTable = false;
  for (const line of markdown.split('\n')) {
    if (/^\| variable \| default \|/.test(line)) inTable = true;
    else if (!line.startsWith('|')) inTable = false;
    else if (inTable && !line.startsWith('|---')) {
      const [, first = '', second = ''] = line.split(/(?<!\\)\|/);
      const names = [...first.matchAll(/`([A-Z][A-Z0-9_]*)(\*?)(?:=[^`]*)?`/g)].filter((m) => m[2] === '').map((m) => m[1]!);
      rows.push({ file, names, defaults: second.trim() });
    }
  }
  return rows;
}

const rows = DOCS.flatMap((file) => docRows(file, readFileSync(packagePath(file), 'utf8')));
const settings: Setting<unknown>[] = ALL_TABLES.flatMap((table) => Object.values(table) as Setting<unknown>[]);

/** How a constant default is written in a docs table. */
function spellings(value: unknown): string[] | undefined {
  if (typeof value === 'number') return [String(value)];
  if (typeof value === 'boolean') return value ? ['true', 'on'] : ['false', 'off'];
  return undefined;
}

describe('config: the docs tables and the config table agree', () => {
  it('parses the docs tables (a guard against a reformatted table reading as empty)', () => {
    expect(rows.length).to.be.greaterThan(40);
    expect(settings.length).to.be.greaterThan(50);
  });

  it('documents every variable the config reads', () => {
    const documented = new Set(rows.flatMap((r) => r.names));
    const missing = settings.map((s) => s.env).filter((name) => !documented.has(name));
    expect(missing, 'variables read but in no docs table').to.deep.equal([]);
  });

  it('reads every variable the docs tables name', () => {
    const read = new Set(settings.map((s) => s.env));
    const unknown = rows.flatMap((r) => r.names.map((n) => `${r.file}: ${n}`)).filter((entry) => !read.has(entry.split(': ')[1]!));
    expect(unknown, 'documented but not read').to.deep.equal([]);
  });

  it('shows the default the config uses, for every number and on/off setting', () => {
    const wrong: string[] = [];
    for (const row of rows) {
      const cells = row.names.length > 1 ? row.defaults.split(/\s*[,/]\s*/) : [row.defaults];
      row.names.forEach((name, i) => {
        const setting = settings.find((s) => s.env === name);
        const expected = setting && typeof setting.default !== 'function' ? spellings(setting.default) : undefined;
        const cell = (cells[i] ?? '').replace(/`/g, '');
        if (expected && !expected.some((word) => new RegExp(`^${word}\\b`).test(cell))) {
          wrong.push(`${row.file}: ${name} shows "${cell}", the config defaults to ${String(setting!.default)}`);
        }
      });
    }
    expect(wrong).to.deep.equal([]);
  });
});
