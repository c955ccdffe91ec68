/**
 * A user filter as a WHERE clause. The filter arrives already checked and
 * typed (the SCIM layer parses RFC 7644 filters into this shape); here it
 * becomes SQL whose values are always bound parameters, never text in the
 * statement.
 *
 * Every predicate is two-valued: a comparison on an unassigned (NULL)
 * attribute is false, so `not` is plain negation and `not (x eq v)` matches
 * users without x. Case-insensitive comparisons lower both sides with the
 * database's lower(), the expression the unique userName index is built on,
 * so `userName eq` stays an index lookup; `sw` on userName can use the
 * text_pattern_ops index of migration 031, and an `emails` value equality
 * the GIN index of migration 032. Ordering comparisons (gt, ge, lt,
 * le) on strings use code-point order (COLLATE "C") whatever the database's
 * collation, so the answer does not depend on how the server was set up.
 */
export type TextField = 'id' | 'userName' | 'externalId' | 'displayName' | 'givenName' | 'familyName' | 'formatted';
export type DateField = 'created' | 'lastModified';
export type EmailText = 'value' | 'type';
export type TextOp = 'eq' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';
export type OrderOp = 'eq' | 'gt' | 'ge' | 'lt' | 'le';

/** and, or, not and constants: the same over users and over one email. */
interface Both<T> {
  op: 'and' | 'or';
  left: T;
  right: T;
}
interface Not<T> {
  op: 'not';
  filter: T;
}
interface Const {
  op: 'const';
  value: boolean;
}
type Logic<T> = Both<T> | Not<T> | Const;

export type EmailFilter =
  | Both<EmailFilter>
  | Not<EmailFilter>
  | Const
  | { op: 'pr'; sub: EmailText | 'primary' }
  | { op: TextOp; sub: EmailText; value: string; caseExact: boolean }
  | { op: 'eq'; sub: 'primary'; value: boolean };

export type UserFilter =
  | Both<UserFilter>
  | Not<UserFilter>
  | Const
  | { op: 'pr'; field: TextField | DateField | 'active' | 'name' | 'emails' }
  | { op: TextOp; field: TextField; value: string; caseExact: boolean }
  | { op: 'eq'; field: 'active'; value: boolean }
  | { op: OrderOp; field: DateField; value: Date }
  /** Some email of the user matches. */
  | { op: 'emails'; where: EmailFilter };

const FORMATTED = `coalesce(name_formatted, nullif(concat_ws(' ', nullif(given_name, ''), nullif(family_name, '')), ''))`;

/** Column expression and whether it can be NULL. */
const TEXT_COLUMNS: Record<TextField, [string, boolean]> = {
  id: ['id::text', false],
  userName: ['user_name', false],
  externalId: ['external_id', true],
  displayName: ['display_name', true],
  givenName: ['given_name', true],
  familyName: ['family_name', true],
  formatted: [FORMATTED, true],
};
const DATE_COLUMNS: Record<DateField, string> = { created: 'created_at', lastModified: 'updated_at' };
const EMAIL_TEXT: Record<EmailText, string> = { value: `(e->>'value')`, type: `(e->>'type')` };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ORDER_SQL = { gt: '>', ge: '>=', lt: '<', le: '<=' } as const;

/** Binds a value and answers its placeholder. */
type Bind = (v: unknown) => string;

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function present(column: string, nullable: boolean): string {
  return nullable ? `(${column} IS NOT NULL AND ${column} <> '')` : `(${column} <> '')`;
}

function compareText(column: string, nullable: boolean, op: TextOp, value: string, caseExact: boolean, bind: Bind): string {
  const col = caseExact ? column : `lower(${column})`;
  const bound = (v: string) => (caseExact ? bind(v) : `lower(${bind(v)})`);
  let sql: string;
  if (op === 'eq') sql = `${col} = ${bound(value)}`;
  else if (op === 'co') sql = `${col} LIKE ${bound(`%${escapeLike(value)}%`)}`;
  else if (op === 'sw') sql = `${col} LIKE ${bound(`${escapeLike(value)}%`)}`;
  else if (op === 'ew') sql = `${col} LIKE ${bound(`%${escapeLike(value)}`)}`;
  else sql = `${col} COLLATE "C" ${ORDER_SQL[op]} ${bound(value)} COLLATE "C"`;
  return nullable ? `(${column} IS NOT NULL AND ${sql})` : `(${sql})`;
}

function isLogic<T>(f: { op: string }): f is Logic<T> {
  return f.op === 'and' || f.op === 'or' || f.op === 'not' || f.op === 'const';
}

function logicSql<T>(f: Logic<T>, recurse: (x: T) => string): string {
  if (f.op === 'not') return `(NOT ${recurse(f.filter)})`;
  if (f.op === 'const') return f.value ? 'TRUE' : 'FALSE';
  return `(${recurse(f.left)} ${f.op.toUpperCase()} ${recurse(f.right)})`;
}

function emailSql(f: EmailFilter, bind: Bind): string {
  if (isLogic<EmailFilter>(f)) return logicSql(f, (x) => emailSql(x, bind));
  switch (f.op) {
    case 'pr':
      return f.sub === 'primary' ? `(e->'primary' IS NOT NULL)` : present(EMAIL_TEXT[f.sub], true);
    default:
      if (f.sub === 'primary') return `(coalesce((e->>'primary')::boolean, false) = ${bind(f.value)}::boolean)`;
      return compareText(EMAIL_TEXT[f.sub], true, f.op, f.value, f.caseExact, bind);
  }
}

/** An address every matching email must have (a `value eq` conjunct): the GIN index of migration 032 can find its users. */
function requiredValue(f: EmailFilter): string | undefined {
  if (f.op === 'eq' && f.sub === 'value' && !f.caseExact) return f.value;
  if (f.op === 'and') return requiredValue(f.left) ?? requiredValue(f.right);
  return undefined;
}

function userSql(f: UserFilter, bind: Bind): string {
  if (isLogic<UserFilter>(f)) return logicSql(f, (x) => userSql(x, bind));
  switch (f.op) {
    case 'emails': {
      const exists = `EXISTS (SELECT 1 FROM jsonb_array_elements(emails) AS e WHERE ${emailSql(f.where, bind)})`;
      const value = requiredValue(f.where);
      // The index condition narrows the users; EXISTS keeps the exact meaning (type and value on one email).
      return value === undefined ? exists : `(user_email_values(emails) @> ARRAY[lower(${bind(value)})] AND ${exists})`;
    }
    case 'pr':
      if (f.field === 'active' || f.field === 'created' || f.field === 'lastModified') return 'TRUE';
      if (f.field === 'emails') return '(jsonb_array_length(emails) > 0)';
      if (f.field === 'name') return `(${present('given_name', true)} OR ${present('family_name', true)} OR ${present(FORMATTED, true)})`;
      return present(...TEXT_COLUMNS[f.field]);
    default:
      if ('caseExact' in f) {
        // A case-exact id can only equal the canonical lower-case text of a uuid: then it is a primary-key lookup.
        if (f.field === 'id' && f.op === 'eq') return UUID.test(f.value) ? `(id = ${bind(f.value)}::uuid)` : 'FALSE';
        return compareText(...TEXT_COLUMNS[f.field], f.op, f.value, f.caseExact, bind);
      }
      if (f.field === 'active') return `(active = ${bind(f.value)}::boolean)`;
      {
        // Answers carry milliseconds, so a client filtering on a value it read must meet the same precision.
        const column = `date_trunc('milliseconds', ${DATE_COLUMNS[f.field]})`;
        return `(${column} ${f.op === 'eq' ? '=' : ORDER_SQL[f.op]} ${bind(f.value.toISOString())}::timestamptz)`;
      }
  }
}

/** The filter as a boolean SQL expression; its values are appended to `params`. */
export function userFilterSql(filter: UserFilter, params: unknown[]): string {
  return userSql(filter, (v) => {
    params.push(v);
    return `$${params.length}`;
  });
}
