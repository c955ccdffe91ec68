import { invalidInput } from '../../../shared/errors.js';
import type { EmailFilter, EmailText, TextField, TextOp, UserFilter } from '../../stores/users-filter.js';

/**
 * RFC 7644 §3.4.2.2 filters on Users, parsed into the typed filter the
 * users store turns into SQL:
 *
 *   filter    = or
 *   or        = and *( "or" and )
 *   and       = unary *( "and" unary )          ; not > and > or
 *   unary     = "not" "(" filter ")" / "(" filter ")" / attrExp / valuePath
 *   attrExp   = attrPath "pr" / attrPath compareOp compValue
 *   valuePath = "emails" "[" valFilter "]" [ "." subAttr compareOp compValue ]
 *   attrPath  = [ core User URN ":" ] attr [ "." subAttr ]
 *
 * Attribute names, operators and keywords are case-insensitive. Case
 * sensitivity of values follows /Schemas: id and externalId are case-exact,
 * every other string (userName, names, displayName, emails) is not.
 * meta.created and meta.lastModified compare as datetimes, active and
 * emails.primary as booleans. `ne` is `not eq`, `eq null` is `not pr`.
 * `emails[f].value eq "v"` (how identity providers write it) means one
 * email matching both. Anything else is refused with invalidFilter naming
 * what was not understood: a connector that gets users back for a filter
 * it thinks was applied would link or overwrite the wrong account.
 *
 * scim2-parse-filter (npm) was considered: it does not read the
 * `emails[…].value op v` form identity providers send and reports errors
 * without saying what was wrong, and mapping its tree onto the schema
 * would be most of this file anyway.
 */
export const MAX_FILTER_LENGTH = 2048;
const MAX_DEPTH = 32;
/**
 * Comparisons in one filter, and `emails` comparisons (each a scan of every
 * user's email list) among them. Connectors send one or two; the caps bound
 * what a filter costs on the embedded store, which cannot time a statement
 * out and serves every tenant from one thread.
 */
export const MAX_COMPARISONS = 24;
export const MAX_EMAIL_COMPARISONS = 8;
const CORE_PREFIX = 'urn:ietf:params:scim:schemas:core:2.0:user:';
const OPERATORS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'pr', 'gt', 'ge', 'lt', 'le']);
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;
/** Half of a UTF-16 surrogate pair on its own: no stored value holds one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

type Token = { kind: 'word'; text: string } | { kind: 'string'; value: string } | { kind: 'punct'; text: '(' | ')' | '[' | ']' };
type Literal = string | boolean | null;

function bad(detail: string): never {
  throw invalidInput(detail, 'invalidFilter');
}

const WORD_CHAR = /[A-Za-z0-9_:.$+-]/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i += 1;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) bad('The filter has an unterminated string.');
      let value: unknown;
      try {
        value = JSON.parse(text.slice(i, j + 1));
      } catch {
        bad(`The filter has an invalid string literal: ${text.slice(i, Math.min(j + 1, i + 40))}`);
      }
      tokens.push({ kind: 'string', value: value as string });
      i = j + 1;
    } else if (c === '(' || c === ')' || c === '[' || c === ']') {
      tokens.push({ kind: 'punct', text: c });
      i += 1;
    } else if (WORD_CHAR.test(c)) {
      let j = i;
      while (j < text.length && WORD_CHAR.test(text[j]!)) j += 1;
      tokens.push({ kind: 'word', text: text.slice(i, j) });
      i = j;
    } else {
      bad(`The filter has an unexpected character "${c}".`);
    }
  }
  return tokens;
}

/** What an attribute path names, before an operator is applied to it. */
type Attribute =
  | { type: 'text'; field: TextField; caseExact: boolean; name: string }
  | { type: 'date'; field: 'created' | 'lastModified'; name: string }
  | { type: 'boolean'; name: string }
  | { type: 'complex'; field: 'name'; name: string }
  | { type: 'emails'; sub: EmailText | 'primary' | undefined; name: string };

function attributeOf(word: string): Attribute {
  let lower = word.toLowerCase();
  if (lower.startsWith(CORE_PREFIX)) lower = lower.slice(CORE_PREFIX.length);
  else if (lower.startsWith('urn:')) bad(`Filtering on "${word}" is not supported: only the core User schema is served.`);
  const text = (field: TextField, caseExact = false): Attribute => ({ type: 'text', field, caseExact, name: word });
  switch (lower) {
    case 'id':
      return text('id', true);
    case 'username':
      return text('userName');
    case 'externalid':
      return text('externalId', true);
    case 'displayname':
      return text('displayName');
    case 'name':
      return { type: 'complex', field: 'name', name: word };
    case 'name.givenname':
      return text('givenName');
    case 'name.familyname':
      return text('familyName');
    case 'name.formatted':
      return text('formatted');
    case 'active':
      return { type: 'boolean', name: word };
    case 'meta.created':
      return { type: 'date', field: 'created', name: word };
    case 'meta.lastmodified':
      return { type: 'date', field: 'lastModified', name: word };
    case 'emails':
      return { type: 'emails', sub: undefined, name: word };
    case 'emails.value':
    case 'emails.type':
    case 'emails.primary':
      return { type: 'emails', sub: lower.slice('emails.'.length) as EmailText | 'primary', name: word };
    default:
      return bad(`Filtering on "${word}" is not supported: Tollgate does not keep that attribute.`);
  }
}

/** Inside emails[…]: sub-attribute names, with or without the "emails." they belong to. */
function emailSubOf(word: string): EmailText | 'primary' {
  const lower = word.toLowerCase().replace(/^emails\./, '');
  if (lower === 'value' || lower === 'type' || lower === 'primary') return lower;
  return bad(`Filtering emails on "${word}" is not supported: use value, type or primary.`);
}

function not<T extends { op: string }>(f: T): { op: 'not'; filter: T } {
  return { op: 'not', filter: f };
}

function checkString(name: string, op: string, v: Literal): string {
  if (typeof v !== 'string') bad(`"${name} ${op}" compares with a quoted string.`);
  // PostgreSQL text holds neither, so no stored value could be compared with them.
  if (v.includes('\u0000') || LONE_SURROGATE.test(v)) bad(`The value compared with "${name}" holds a NUL or an unpaired surrogate.`);
  return v;
}

function checkBoolean(name: string, op: string, v: Literal): boolean {
  if (op !== 'eq' && op !== 'ne') bad(`"${op}" is not defined for the boolean "${name}": use eq or ne.`);
  if (typeof v !== 'boolean') bad(`"${name} ${op}" compares with true or false.`);
  return v;
}

function textOp(name: string, op: string, type: string): TextOp {
  if (op === 'ne') return 'eq';
  if (op === 'pr') return bad(`"${name}" needs no value after pr.`);
  if (type === 'date' && (op === 'co' || op === 'sw' || op === 'ew')) bad(`"${op}" is not defined for the datetime "${name}".`);
  return op as TextOp;
}

/** `attr op value`, or `attr pr` (value undefined). */
function compare(attr: Attribute, opWord: string, value: Literal | undefined): UserFilter {
  const op = opWord.toLowerCase();
  const negate = op === 'ne';
  if (op === 'pr') {
    if (attr.type === 'emails') return attr.sub === undefined ? { op: 'pr', field: 'emails' } : { op: 'emails', where: { op: 'pr', sub: attr.sub } };
    if (attr.type === 'boolean') return { op: 'pr', field: 'active' };
    return { op: 'pr', field: attr.field };
  }
  if (value === null) {
    if (op !== 'eq' && op !== 'ne') bad(`"${attr.name} ${opWord} null" is not defined: use eq null, ne null or pr.`);
    const pr = compare(attr, 'pr', undefined);
    return op === 'eq' ? not(pr) : pr;
  }
  if (value === undefined) return bad(`"${attr.name} ${opWord}" needs a value.`);
  let f: UserFilter;
  switch (attr.type) {
    case 'text':
      f = { op: textOp(attr.name, op, 'text'), field: attr.field, value: checkString(attr.name, op, value), caseExact: attr.caseExact };
      break;
    case 'boolean':
      f = { op: 'eq', field: 'active', value: checkBoolean(attr.name, op, value) };
      break;
    case 'date': {
      const dateOp = textOp(attr.name, op, 'date') as 'eq' | 'gt' | 'ge' | 'lt' | 'le';
      const s = checkString(attr.name, op, value);
      const at = DATETIME.test(s) ? new Date(s) : undefined;
      if (!at || Number.isNaN(at.getTime())) bad(`"${attr.name}" compares with a datetime like "2025-01-31T12:00:00Z", not "${s.slice(0, 40)}".`);
      // Years 1-9999 in UTC: the database refuses year 0 and five-digit years.
      const year = at.getUTCFullYear();
      if (year < 1 || year > 9999) bad(`"${attr.name}" compares with a datetime between years 1 and 9999 (UTC), not "${s.slice(0, 40)}".`);
      f = { op: dateOp, field: attr.field, value: at };
      break;
    }
    case 'complex':
      return bad(`"${attr.name}" is complex: filter on name.givenName, name.familyName or name.formatted, or use "name pr".`);
    case 'emails':
      // Outside brackets ne negates the whole test: no email equals the value.
      f = { op: 'emails', where: emailCompare(attr.sub ?? 'value', attr.name, negate ? 'eq' : opWord, value) };
      break;
  }
  return negate ? not(f) : f;
}

function emailCompare(sub: EmailText | 'primary', name: string, opWord: string, value: Literal | undefined): EmailFilter {
  const op = opWord.toLowerCase();
  if (op === 'pr' || value === undefined) return { op: 'pr', sub };
  if (value === null) {
    if (op !== 'eq' && op !== 'ne') bad(`"${name} ${opWord} null" is not defined: use eq null, ne null or pr.`);
    const pr: EmailFilter = { op: 'pr', sub };
    return op === 'eq' ? not(pr) : pr;
  }
  const f: EmailFilter =
    sub === 'primary'
      ? { op: 'eq', sub, value: checkBoolean(name, op, value) }
      : { op: textOp(name, op, 'text'), sub, value: checkString(name, op, value), caseExact: false };
  return op === 'ne' ? not(f) : f;
}

/** A recursive-descent parser over the tokens; `emails` is set while inside emails[…]. */
function createParser(tokens: Token[]) {
  let i = 0;
  let depth = 0;
  let comparisons = 0;
  let emailComparisons = 0;
  const counted = <T>(f: T, email: boolean): T => {
    comparisons += 1;
    if (email) emailComparisons += 1;
    if (comparisons > MAX_COMPARISONS) bad(`The filter has more than ${MAX_COMPARISONS} comparisons; split it into several searches.`);
    if (emailComparisons > MAX_EMAIL_COMPARISONS)
      bad(`The filter compares emails more than ${MAX_EMAIL_COMPARISONS} times; split it into several searches.`);
    return f;
  };
  const peek = () => tokens[i];
  const isWord = (t: Token | undefined): t is { kind: 'word'; text: string } => t?.kind === 'word';
  const isKeyword = (t: Token | undefined, word: string) => isWord(t) && t.text.toLowerCase() === word;
  const isPunct = (t: Token | undefined, text: string) => t?.kind === 'punct' && t.text === text;
  const describe = (t: Token | undefined) =>
    t === undefined ? 'the end' : t.kind === 'string' ? JSON.stringify(t.value).slice(0, 40) : `"${t.text}"`;
  const expectPunct = (text: string, after: string) => {
    const t = peek();
    if (!isPunct(t, text)) bad(`Expected "${text}" ${after}, found ${describe(t)}.`);
    i += 1;
  };

  function literal(name: string, op: string): Literal {
    const t = peek();
    i += 1;
    if (t?.kind === 'string') return t.value;
    if (isKeyword(t, 'true')) return true;
    if (isKeyword(t, 'false')) return false;
    if (isKeyword(t, 'null')) return null;
    if (isWord(t) && /^[-+]?\d/.test(t.text)) bad(`"${name} ${op}" compares with a number, and no User attribute here is numeric.`);
    return bad(`Expected a value after "${name} ${op}", found ${describe(t)}; strings are quoted.`);
  }

  function operator(name: string): string {
    const t = peek();
    if (!isWord(t) || !OPERATORS.has(t.text.toLowerCase()))
      bad(`Expected an operator (eq ne co sw ew pr gt ge lt le) after "${name}", found ${describe(t)}.`);
    i += 1;
    return t.text;
  }

  function group<T>(inner: () => T): T {
    depth += 1;
    if (depth > MAX_DEPTH) bad(`The filter nests deeper than ${MAX_DEPTH} levels.`);
    i += 1;
    const f = inner();
    expectPunct(')', 'to close "("');
    depth -= 1;
    return f;
  }

  function binary<T extends { op: string }>(operand: () => T, word: 'and' | 'or'): () => T {
    return () => {
      let left = operand();
      while (isKeyword(peek(), word)) {
        i += 1;
        left = { op: word, left, right: operand() } as unknown as T;
      }
      return left;
    };
  }

  /** `not (…)` or `(…)` around `inner`; undefined when the next token opens neither. */
  function grouped<T extends { op: string }>(inner: () => T): T | { op: 'not'; filter: T } | undefined {
    const t = peek();
    if (isKeyword(t, 'not')) {
      i += 1;
      if (!isPunct(peek(), '(')) bad('"not" must be followed by "(".');
      return not(group(inner));
    }
    return isPunct(t, '(') ? group(inner) : undefined;
  }

  function emailTerm(): EmailFilter {
    const inParens = grouped(emailOr);
    if (inParens) return inParens;
    const t = peek();
    if (!isWord(t)) return bad(`Expected an email sub-attribute inside "emails[…]", found ${describe(t)}.`);
    i += 1;
    const sub = emailSubOf(t.text);
    const op = operator(t.text);
    return counted(emailCompare(sub, t.text, op, op.toLowerCase() === 'pr' ? undefined : literal(t.text, op)), true);
  }
  const emailAnd = binary(emailTerm, 'and');
  const emailOr = binary(emailAnd, 'or');

  function valuePath(name: string): UserFilter {
    if (name.toLowerCase().replace(CORE_PREFIX, '') !== 'emails') bad(`"${name}[…]" is not supported: only emails is multi-valued.`);
    i += 1;
    const where = emailOr();
    expectPunct(']', 'to close "emails["');
    const next = peek();
    if (!isWord(next) || !next.text.startsWith('.')) return { op: 'emails', where };
    // emails[type eq "work"].value eq "a@b": one email matching both.
    i += 1;
    const subName = next.text.slice(1);
    const sub = emailSubOf(subName);
    const op = operator(`${name}[…]${next.text}`);
    const also = counted(emailCompare(sub, `${name}[…]${next.text}`, op, op.toLowerCase() === 'pr' ? undefined : literal(subName, op)), true);
    return { op: 'emails', where: { op: 'and', left: where, right: also } };
  }

  function term(): UserFilter {
    const inParens = grouped(or);
    if (inParens) return inParens;
    const t = peek();
    if (!isWord(t)) return bad(`Expected an attribute name, found ${describe(t)}.`);
    i += 1;
    if (isPunct(peek(), '[')) return valuePath(t.text);
    const attr = attributeOf(t.text);
    const op = operator(t.text);
    return counted(compare(attr, op, op.toLowerCase() === 'pr' ? undefined : literal(t.text, op)), attr.type === 'emails');
  }
  const and = binary(term, 'and');
  const or = binary(and, 'or');

  return {
    parse(): UserFilter {
      const f = or();
      if (i < tokens.length) bad(`Unexpected ${describe(peek())} in the filter; terms are joined by "and" or "or".`);
      return f;
    },
  };
}

export function parseFilter(text: string): UserFilter {
  if (text.length > MAX_FILTER_LENGTH) bad(`The filter is longer than ${MAX_FILTER_LENGTH} characters.`);
  const tokens = tokenize(text);
  if (tokens.length === 0) bad('The filter is empty.');
  return createParser(tokens).parse();
}
