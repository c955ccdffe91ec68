/**
 * `npm run lint` step: no import cycle in the production code (proxy/,
 * control-plane/, shared/). A cycle makes load order matter and ties modules
 * that should change apart; it is also how the proxy's formats and translate
 * folders once came to depend on each other. eslint-plugin-import's no-cycle
 * would do this, but the tree takes no dependency for one check: this walks
 * each file's static `import`/`export … from` statements (type-only ones
 * too: a type-only cycle still ties the files together) with the TypeScript
 * parser and reports every strongly connected group of files. A dynamic
 * `import()` is not followed: it loads on demand, after both files are
 * loaded (the database picks its driver that way, and the driver imports the
 * database's types).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOTS = ['proxy', 'control-plane', 'shared'];

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') sourceFiles(full, out);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** The files a module imports statically, resolved (`./x.js` → `./x.ts` or `./x/index.ts`); packages left out. */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  for (const statement of source.statements) {
    const spec = (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
    if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) continue;
    const base = resolve(dirname(file), spec.text).replace(/\.js$/, '');
    const target = [`${base}.ts`, join(base, 'index.ts')].find((p) => existsSync(p));
    if (target) found.push(target);
  }
  return found;
}

/** Every group of files that import each other round (Tarjan's strongly connected components), each as paths from `root`. */
export function importCycles(root: string, dirs: string[] = ROOTS): string[][] {
  const files = dirs.flatMap((d) => (existsSync(join(root, d)) ? sourceFiles(join(root, d)) : []));
  const edges = new Map(files.map((f) => [f, importsOf(f)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || edges.get(v)!.includes(v)) cycles.push(group.map((f) => relative(root, f)).sort());
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return cycles;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cycles = importCycles(resolve(dirname(fileURLToPath(import.meta.url)), '..'));
  for (const group of cycles) process.stderr.write(`import cycle among ${group.length} files:\n  ${group.join('\n  ')}\n`);
  if (cycles.length) process.exit(1);
  process.stdout.write(`no import cycle in ${ROOTS.join(', ')}\n`);
}
