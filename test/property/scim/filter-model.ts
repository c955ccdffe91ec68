import fc from 'fast-check';

/**
 * A model of RFC 7644 filters over Users, independent of the server's
 * parser: random expressions of the whole supported grammar, rendered as
 * text with random spelling (case, the core URN prefix, spacing, redundant
 * parentheses), and a reference evaluator over the User resources as the
 * server answers them. The server must agree with it.
 */
export interface ScimUserJson {
  id: string;
  userName: string;
  externalId?: string;
  displayName?: string;
  name?: { givenName?: string; familyName?: string; formatted?: string };
  active: boolean;
  emails: { value: string; type?: string; primary?: boolean }[];
  meta: { created: string; lastModified: string };
}

type TextAttr = 'id' | 'userName' | 'externalId' | 'displayName' | 'name.givenName' | 'name.familyName' | 'name.formatted';
type DateAttr = 'meta.created' | 'meta.lastModified';
type EmailSub = 'value' | 'type' | 'primary';
const TEXT_OPS = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'] as const;
const DATE_OPS = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'] as const;
type TextOp = (typeof TEXT_OPS)[number];

type Cmp =
  | { kind: 'text'; op: TextOp; value: string }
  | { kind: 'bool'; op: 'eq' | 'ne'; value: boolean }
  | { kind: 'null'; op: 'eq' | 'ne' }
  | { kind: 'pr' };
type EmailExpr = { k: 'and' | 'or'; l: EmailExpr; r: EmailExpr } | { k: 'not'; e: EmailExpr } | { k: 'cmp'; sub: EmailSub; cmp: Cmp };
export type Expr =
  | { k: 'and' | 'or'; l: Expr; r: Expr }
  | { k: 'not'; e: Expr }
  | { k: 'text'; attr: TextAttr; cmp: Cmp }
  | { k: 'date'; attr: DateAttr; op: (typeof DATE_OPS)[number] | 'pr'; value: string }
  | { k: 'active'; cmp: Cmp }
  | { k: 'namePr' }
  | { k: 'emails'; sub: EmailSub | undefined; cmp: Cmp }
  | { k: 'valuePath'; where: EmailExpr; then: { sub: EmailSub; cmp: Cmp } | undefined };

const CASE_EXACT = new Set<TextAttr>(['id', 'externalId']);
const URN = 'urn:ietf:params:scim:schemas:core:2.0:User:';

// ---- reference evaluation -------------------------------------------------

/** Code-point order, as the server's COLLATE "C" comparisons. */
function order(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

function textMatches(actual: string | undefined, cmp: Cmp, caseExact: boolean): boolean {
  const present = actual !== undefined && actual !== '';
  if (cmp.kind === 'pr') return present;
  if (cmp.kind === 'null') return cmp.op === 'eq' ? !present : present;
  if (cmp.kind !== 'text') throw new Error('model: text attribute compared with a boolean');
  if (cmp.op === 'ne') return !textMatches(actual, { ...cmp, op: 'eq' }, caseExact);
  if (actual === undefined) return false;
  const a = caseExact ? actual : actual.toLowerCase();
  const v = caseExact ? cmp.value : cmp.value.toLowerCase();
  switch (cmp.op) {
    case 'eq':
      return a === v;
    case 'co':
      return a.includes(v);
    case 'sw':
      return a.startsWith(v);
    case 'ew':
      return a.endsWith(v);
    case 'gt':
      return order(a, v) > 0;
    case 'ge':
      return order(a, v) >= 0;
    case 'lt':
      return order(a, v) < 0;
    case 'le':
      return order(a, v) <= 0;
  }
}

function boolMatches(actual: boolean | undefined, cmp: Cmp, absentAs: boolean | undefined): boolean {
  if (cmp.kind === 'pr') return actual !== undefined;
  if (cmp.kind === 'null') return cmp.op === 'eq' ? actual === undefined : actual !== undefined;
  if (cmp.kind !== 'bool') throw new Error('model: boolean attribute compared with a string');
  const eq = (actual ?? absentAs) === cmp.value;
  return cmp.op === 'eq' ? eq : !eq;
}

type Email = ScimUserJson['emails'][number];
function emailSubMatches(e: Email, sub: EmailSub, cmp: Cmp): boolean {
  // An email without primary is not the primary one: primary eq false matches it, as the PATCH engine reads it.
  return sub === 'primary' ? boolMatches(e.primary, cmp, cmp.kind === 'bool' ? false : undefined) : textMatches(e[sub], cmp, false);
}

function emailMatches(e: Email, x: EmailExpr): boolean {
  switch (x.k) {
    case 'and':
      return emailMatches(e, x.l) && emailMatches(e, x.r);
    case 'or':
      return emailMatches(e, x.l) || emailMatches(e, x.r);
    case 'not':
      return !emailMatches(e, x.e);
    case 'cmp':
      return emailSubMatches(e, x.sub, x.cmp);
  }
}

function textOf(u: ScimUserJson, attr: TextAttr): string | undefined {
  if (attr.startsWith('name.')) return u.name?.[attr.slice(5) as 'givenName'];
  return u[attr as 'id' | 'userName' | 'externalId' | 'displayName'];
}

export function evaluate(u: ScimUserJson, x: Expr): boolean {
  switch (x.k) {
    case 'and':
      return evaluate(u, x.l) && evaluate(u, x.r);
    case 'or':
      return evaluate(u, x.l) || evaluate(u, x.r);
    case 'not':
      return !evaluate(u, x.e);
    case 'text':
      return textMatches(textOf(u, x.attr), x.cmp, CASE_EXACT.has(x.attr));
    case 'active':
      return boolMatches(u.active, x.cmp, undefined);
    case 'namePr':
      return ['givenName', 'familyName', 'formatted'].some((p) => (u.name?.[p as 'givenName'] ?? '') !== '');
    case 'date': {
      if (x.op === 'pr') return true;
      const a = Date.parse(x.attr === 'meta.created' ? u.meta.created : u.meta.lastModified);
      const v = Date.parse(x.value);
      const r = { eq: a === v, ne: a !== v, gt: a > v, ge: a >= v, lt: a < v, le: a <= v };
      return r[x.op];
    }
    case 'emails': {
      const sub = x.sub ?? 'value';
      if (x.sub === undefined && x.cmp.kind === 'pr') return u.emails.length > 0;
      if (x.sub === undefined && x.cmp.kind === 'null') return x.cmp.op === 'eq' ? u.emails.length === 0 : u.emails.length > 0;
      // Outside brackets, ne and eq null negate the whole test: no email is equal / has it.
      if (x.cmp.kind !== 'pr' && x.cmp.op === 'ne') {
        const eq: Cmp = x.cmp.kind === 'null' ? { kind: 'pr' } : { ...x.cmp, op: 'eq' };
        return x.cmp.kind === 'null' ? u.emails.some((e) => emailSubMatches(e, sub, eq)) : !u.emails.some((e) => emailSubMatches(e, sub, eq));
      }
      if (x.cmp.kind === 'null') return !u.emails.some((e) => emailSubMatches(e, sub, { kind: 'pr' }));
      return u.emails.some((e) => emailSubMatches(e, sub, x.cmp));
    }
    case 'valuePath': {
      const then = x.then;
      return u.emails.some((e) => emailMatches(e, x.where) && (then === undefined || emailSubMatches(e, then.sub, then.cmp)));
    }
  }
}

// ---- rendering --------------------------------------------------------------

export interface Spelling {
  /** Per name, per keyword: how to spell it. */
  caseOf: (word: string) => string;
  urn: boolean;
  space: string;
  parens: boolean;
}

function literal(cmp: Cmp): string {
  if (cmp.kind === 'pr') return '';
  if (cmp.kind === 'null') return ' null';
  return ` ${cmp.kind === 'bool' ? String(cmp.value) : JSON.stringify(cmp.value)}`;
}
const opOf = (cmp: Cmp) => (cmp.kind === 'pr' ? 'pr' : cmp.op);

export function render(x: Expr, s: Spelling): string {
  const w = s.caseOf;
  const attr = (name: string) => `${s.urn ? URN : ''}${w(name)}`;
  const term = (name: string, cmp: Cmp) => `${attr(name)}${s.space}${w(opOf(cmp))}${literal(cmp)}`;
  const emails = (e: EmailExpr): string => {
    switch (e.k) {
      case 'and':
      case 'or':
        return `(${emails(e.l)} ${w(e.k)} ${emails(e.r)})`;
      case 'not':
        return `${w('not')} (${emails(e.e)})`;
      case 'cmp':
        return `${w(e.sub)} ${w(opOf(e.cmp))}${literal(e.cmp)}`;
    }
  };
  switch (x.k) {
    case 'and':
    case 'or': {
      // Parentheses only where precedence needs them (an "or" under an "and"), or where the spelling asks.
      const side = (c: Expr) => ((c.k === 'or' && x.k === 'and') || s.parens ? `(${render(c, s)})` : render(c, s));
      return `${side(x.l)}${s.space}${w(x.k)}${s.space}${side(x.r)}`;
    }
    case 'not':
      return `${w('not')}${s.space}(${render(x.e, s)})`;
    case 'text':
      return term(x.attr, x.cmp);
    case 'active':
      return term('active', x.cmp);
    case 'namePr':
      return `${attr('name')} ${w('pr')}`;
    case 'date':
      return x.op === 'pr' ? `${attr(x.attr)} ${w('pr')}` : `${attr(x.attr)} ${w(x.op)} ${JSON.stringify(x.value)}`;
    case 'emails':
      return term(x.sub === undefined ? 'emails' : `emails.${x.sub}`, x.cmp);
    case 'valuePath': {
      const path = `${attr('emails')}[${emails(x.where)}]`;
      return x.then ? `${path}.${w(x.then.sub)} ${w(opOf(x.then.cmp))}${literal(x.then.cmp)}` : path;
    }
  }
}

// ---- generation ---------------------------------------------------------------

/**
 * Strings from a small alphabet so that random values often equal, contain
 * or prefix stored ones. ASCII only: case folding of other scripts follows
 * the database's lower(), which JavaScript's toLowerCase need not match.
 */
export const ALPHABET = ['a', 'b', 'A', 'B', '@', '.', '%', '_', ' ', "'", '\\', '"'];
export const shortText = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 4 }).map((c) => c.join(''));

/** Leaves joined by and, or and not, to a small random depth. */
function logicTree<T>(leaf: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.letrec<{ t: T }>((tie) => ({
    t: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.record({ k: fc.constantFrom('and' as const, 'or' as const), l: tie('t'), r: tie('t') }) as fc.Arbitrary<T>,
      fc.record({ k: fc.constant('not' as const), e: tie('t') }) as fc.Arbitrary<T>,
    ),
  })).t;
}

export function arbitraries(pool: { texts: string[]; dates: string[]; ids: string[] }) {
  const text = fc.oneof(
    fc.constantFrom(...pool.texts),
    shortText,
    fc.constantFrom(...pool.texts).map((t) => t.toUpperCase()),
    fc.constantFrom(...pool.texts).map((t) => t.slice(0, 3)),
  );
  const textCmp: fc.Arbitrary<Cmp> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('text' as const), op: fc.constantFrom(...TEXT_OPS), value: text }) },
    { weight: 1, arbitrary: fc.constant<Cmp>({ kind: 'pr' }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('null' as const), op: fc.constantFrom('eq' as const, 'ne' as const) }) },
  );
  const idCmp: fc.Arbitrary<Cmp> = fc.oneof(
    fc.record({
      kind: fc.constant('text' as const),
      op: fc.constantFrom(...TEXT_OPS),
      value: fc.oneof(
        fc.constantFrom(...pool.ids),
        fc.constantFrom(...pool.ids).map((i) => i.toUpperCase()),
        fc.constantFrom(...pool.ids).map((i) => i.slice(0, 6)),
      ),
    }),
    fc.constant<Cmp>({ kind: 'pr' }),
  );
  const boolCmp: fc.Arbitrary<Cmp> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ kind: fc.constant('bool' as const), op: fc.constantFrom('eq' as const, 'ne' as const), value: fc.boolean() }),
    },
    { weight: 1, arbitrary: fc.constant<Cmp>({ kind: 'pr' }) },
  );
  const emailSub = fc.constantFrom<EmailSub>('value', 'type', 'primary');
  const emailCmpOf = (sub: EmailSub) => (sub === 'primary' ? boolCmp : textCmp);
  const emailLeaf: fc.Arbitrary<EmailExpr> = emailSub.chain((sub) => emailCmpOf(sub).map((cmp) => ({ k: 'cmp' as const, sub, cmp })));
  const emailExpr = logicTree(emailLeaf);
  const date = fc.oneof(
    fc.constantFrom(...pool.dates),
    fc.constantFrom(...pool.dates).chain((d) => fc.integer({ min: -3, max: 3 }).map((ms) => new Date(Date.parse(d) + ms).toISOString())),
    fc.constantFrom(...pool.dates).map((d) => new Date(Date.parse(d) + 3600_000).toISOString().replace('Z', '+01:00')),
    fc.constant('2001-01-01T00:00:00Z'),
  );
  const leaf: fc.Arbitrary<Expr> = fc.oneof(
    fc.record({
      k: fc.constant('text' as const),
      attr: fc.constantFrom<TextAttr>('userName', 'externalId', 'displayName', 'name.givenName', 'name.familyName', 'name.formatted'),
      cmp: textCmp,
    }),
    fc.record({ k: fc.constant('text' as const), attr: fc.constant<TextAttr>('id'), cmp: idCmp }),
    fc.record({
      k: fc.constant('date' as const),
      attr: fc.constantFrom<DateAttr>('meta.created', 'meta.lastModified'),
      op: fc.constantFrom(...DATE_OPS, 'pr' as const),
      value: date,
    }),
    fc.record({ k: fc.constant('active' as const), cmp: boolCmp }),
    fc.constant<Expr>({ k: 'namePr' }),
    fc.option(emailSub, { nil: undefined }).chain((sub) => emailCmpOf(sub ?? 'value').map((cmp) => ({ k: 'emails' as const, sub, cmp }))),
    fc.record({
      k: fc.constant('valuePath' as const),
      where: emailExpr,
      then: fc.option(
        emailSub.chain((sub) => emailCmpOf(sub).map((cmp) => ({ sub, cmp }))),
        { nil: undefined },
      ),
    }),
  );
  const expr = logicTree(leaf);
  const spelling: fc.Arbitrary<Spelling> = fc.record({
    caseOf: fc.constantFrom(
      (x: string) => x,
      (x: string) => x.toUpperCase(),
      (x: string) => x.toLowerCase(),
      (x: string) => x.replace(/^./, (c) => c.toUpperCase()),
    ),
    urn: fc.boolean(),
    space: fc.constantFrom(' ', '  ', ' \t'),
    parens: fc.boolean(),
  });
  return { expr, spelling };
}
