import { invalidInput } from '../../shared/errors.js';
import type { UserListFilter } from '../stores/users.js';

/**
 * The filter subset connectors use to look a user up before creating it:
 *
 *   filter   = term *( SP "and" SP term )
 *   term     = attr SP "eq" SP string
 *   attr     = "userName" | "externalId"   (case-insensitive, optionally
 *              prefixed by the core User schema URN and ":")
 *
 * Anything else — other operators, "or", "not", parentheses, value paths,
 * other attributes, non-string values — is refused with invalidFilter: a
 * connector that gets every user back for a filter it thinks was applied
 * would link or overwrite the wrong account.
 */
export interface ParsedFilter extends UserListFilter {
  /** Two contradictory terms (`userName eq "a" and userName eq "b"`): matches nothing. */
  matchesNothing: boolean;
}

const MAX_FILTER_LENGTH = 2048;
const CORE_PREFIX = 'urn:ietf:params:scim:schemas:core:2.0:user:';
const OPERATORS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'pr', 'gt', 'ge', 'lt', 'le']);

type Token = { kind: 'word'; text: string } | { kind: 'string'; value: string } | { kind: 'other'; text: string };

function bad(detail: string): never {
  throw invalidInput(detail, 'invalidFilter');
}

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
        bad('The filter has an invalid string literal.');
      }
      tokens.push({ kind: 'string', value: value as string });
      i = j + 1;
    } else if (/[A-Za-z0-9_:.$-]/.test(c)) {
      let j = i;
      while (j < text.length && /[A-Za-z0-9_:.$-]/.test(text[j]!)) j += 1;
      tokens.push({ kind: 'word', text: text.slice(i, j) });
      i = j;
    } else {
      tokens.push({ kind: 'other', text: c });
      i += 1;
    }
  }
  return tokens;
}

function attributeOf(word: string): 'userName' | 'externalId' {
  let name = word.toLowerCase();
  if (name.startsWith(CORE_PREFIX)) name = name.slice(CORE_PREFIX.length);
  if (name === 'username') return 'userName';
  if (name === 'externalid') return 'externalId';
  return bad(`Filtering on "${word}" is not supported; use userName eq or externalId eq.`);
}

export function parseFilter(text: string): ParsedFilter {
  if (text.length > MAX_FILTER_LENGTH) bad(`The filter is longer than ${MAX_FILTER_LENGTH} characters.`);
  const tokens = tokenize(text);
  if (tokens.length === 0) bad('The filter is empty.');
  const out: ParsedFilter = { matchesNothing: false };
  let i = 0;
  for (;;) {
    const [attr, op, value] = [tokens[i], tokens[i + 1], tokens[i + 2]];
    if (attr?.kind !== 'word') bad('Expected an attribute name in the filter.');
    const attribute = attributeOf(attr.text);
    if (op?.kind !== 'word' || !OPERATORS.has(op.text.toLowerCase())) bad(`Expected a comparison operator after "${attr.text}".`);
    if (op.text.toLowerCase() !== 'eq') bad(`The operator "${op.text}" is not supported; only eq is.`);
    if (value?.kind !== 'string') bad(`"${attr.text} eq" must be followed by a quoted string.`);
    // PostgreSQL text cannot hold NUL, so no stored value can equal it.
    if (value.value.includes('\u0000')) out.matchesNothing = true;
    const previous = out[attribute];
    if (previous !== undefined) {
      const same = attribute === 'userName' ? previous.toLowerCase() === value.value.toLowerCase() : previous === value.value;
      if (!same) out.matchesNothing = true;
    } else {
      out[attribute] = value.value;
    }
    i += 3;
    if (i === tokens.length) return out;
    const joiner = tokens[i];
    if (joiner?.kind !== 'word' || joiner.text.toLowerCase() !== 'and') {
      const what = joiner?.kind === 'word' ? joiner.text : joiner?.kind === 'other' ? joiner.text : 'a value';
      bad(`Unsupported filter syntax near "${what}"; only "and" may join terms.`);
    }
    i += 1;
  }
}
