import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importCycles } from '../../../tools/import-cycles.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('lint: no import cycle in production code (tools/import-cycles.ts)', () => {
  let root: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'tollgate-cycles-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('finds a planted cycle across folders, through an index file and a type-only import', () => {
    write('proxy/a.ts', "import { b } from './b.js';\nexport const a = b;\n");
    write('proxy/b.ts', "import type { C } from '../shared/c/index.js';\nexport const b = 1 as C;\n");
    write('shared/c/index.ts', "export { a } from '../../proxy/a.js';\nexport type C = number;\n");
    write('proxy/alone.ts', "import { a } from './a.js';\nexport const x = a;\n");
    expect(importCycles(root)).to.deep.equal([['proxy/a.ts', 'proxy/b.ts', 'shared/c/index.ts']]);
  });

  it('finds a file that imports itself, and reports two cycles apart', () => {
    write('shared/self.ts', "import './self.js';\n");
    write('control-plane/x.ts', "import './y.js';\n");
    write('control-plane/y.ts', "import './x.js';\n");
    expect(importCycles(root).sort()).to.deep.equal([['control-plane/x.ts', 'control-plane/y.ts'], ['shared/self.ts']]);
  });

  it('does not follow a dynamic import() or a package, and finds nothing in a tree without cycles', () => {
    write('control-plane/db.ts', "export type Db = 1;\nexport const open = () => import('./driver.js');\n");
    write('control-plane/driver.ts', "import type { Db } from './db.js';\nimport pg from 'pg';\nexport const d: Db = 1;\nvoid pg;\n");
    expect(importCycles(root)).to.deep.equal([]);
  });

  it('the repository has none', () => {
    expect(importCycles(REPO)).to.deep.equal([]);
  });
});
