import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PACKAGE_ROOT } from '../../../../shared/package-root.js';
import { WIRE_FORMAT_FACTS, WIRE_FORMATS } from '../../../../shared/wire-formats.js';

/**
 * The registry (proxy/wire/registry.ts) is the only list of wire formats:
 * code elsewhere asks it, never compares a format's name. A comparison
 * against a name is how a new format silently falls through to an old one.
 */
const ROOT = PACKAGE_ROOT;
const SCANNED = ['proxy', 'shared', 'control-plane'];
/** Where formats are named by design: each format's folder and the registry, and the shared list. */
const ALLOWED = (file: string): boolean => file.startsWith('proxy/wire/') || file === 'shared/wire-formats.ts';

/** Every format's name and config name, and Gemini's (announced, so a comparison against it is caught before it lands). */
const NAMES = [...new Set([...WIRE_FORMATS, ...WIRE_FORMATS.map((f) => WIRE_FORMAT_FACTS[f].configName), 'gemini'])];
const quoted = `['"\`](?:${NAMES.join('|')})['"\`]`;
/** `x === 'chat'`, `'chat' !== x`, `case 'chat':`, and the same with `==`/`!=`. */
const COMPARISON = new RegExp(`(?:[!=]==?\\s*${quoted})|(?:${quoted}\\s*[!=]==?)|(?:\\bcase\\s+${quoted}\\s*:)`);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'public' ? [] : sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

describe('wire registry: the only list of formats', () => {
  it('the check catches each way of comparing a format name, and leaves other strings alone', () => {
    for (const line of ["if (format === 'chat')", "'messages' !== f", 'case "responses":', "x == 'chat_completions'", "f === 'gemini'"]) {
      expect(COMPARISON.test(line), line).to.equal(true);
    }
    for (const line of ["const x = 'chat';", "WIRE['messages']", "kind === 'chatty'", "'gen_ai.operation.name': 'chat'"]) {
      expect(COMPARISON.test(line), line).to.equal(false);
    }
  });

  it('no file outside proxy/wire/ and shared/wire-formats.ts compares a format name', () => {
    const files = SCANNED.flatMap((d) => sourceFiles(join(ROOT, d))).map((f) => relative(ROOT, f));
    expect(files.length).to.be.greaterThan(100);
    const found = files
      .filter((f) => !ALLOWED(f))
      .flatMap((f) =>
        readFileSync(join(ROOT, f), 'utf8')
          .split('\n')
          .flatMap((line, i) => (COMPARISON.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(found, 'ask proxy/wire/registry.ts (WIRE[format]) instead').to.deep.equal([]);
  });
});
