import type { ConfigMode } from './config-types.js';

/** What a default may depend on: the mode the process runs in, the ports already read, other variables. */
export interface DefaultContext {
  env: NodeJS.ProcessEnv;
  mode: ConfigMode;
  controlPlanePort: number;
  proxyPort: number;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * Reads one set, non-empty variable; a problem names the variable (the reader
 * adds `NAME: `); undefined: the value reads as unset (whitespace, for some).
 */
export type Parser<T> = (raw: string) => Parsed<T> | undefined;

/** One environment variable: where it comes from, how it is read, what holds when it is unset, what it is for. */
export interface Setting<T> {
  env: string;
  parse: Parser<T>;
  default: T | ((ctx: DefaultContext) => T);
  doc: string;
}

export type SettingTable<S> = { [K in keyof S]-?: Setting<S[K]> };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = <T>(problem: string): Parsed<T> => ({ ok: false, problem });

export const port: Parser<number> = (raw) => {
  const n = Number(raw);
  return Number.isInteger(n) && n >= 0 && n <= 65535 ? ok(n) : bad(`"${raw}" is not a port number (0-65535)`);
};

export const positiveInt: Parser<number> = (raw) => {
  const n = Number(raw);
  return Number.isInteger(n) && n > 0 ? ok(n) : bad(`"${raw}" is not a positive integer`);
};

export const flag: Parser<boolean> = (raw) => {
  const word = raw.trim().toLowerCase();
  if (['1', 'true', 'on', 'yes'].includes(word)) return ok(true);
  if (['0', 'false', 'off', 'no'].includes(word)) return ok(false);
  if (word === '') return undefined;
  return bad(`"${raw}" is not on/off (true/false, 1/0)`);
};

export const text: Parser<string> = (raw) => ok(raw);

export const oneOf =
  (choices: readonly string[]): Parser<string> =>
  (raw) =>
    choices.includes(raw) ? ok(raw) : bad(`"${raw}" is not one of ${choices.join(', ')}`);

export const atLeast =
  (chars: number): Parser<string> =>
  (raw) =>
    raw.length >= chars ? ok(raw) : bad(`must be at least ${chars} characters`);

/** A URL with one of `protocols`, trailing slashes dropped; a bad one is printed without its credentials. */
export const url =
  (protocols: string[]): Parser<string> =>
  (raw) => {
    let protocol: string;
    try {
      protocol = new URL(raw).protocol;
    } catch {
      return bad(`"${redactUrl(raw)}" is not a URL`);
    }
    if (!protocols.includes(protocol)) return bad(`protocol must be one of ${protocols.join(', ')} (got ${protocol})`);
    return ok(raw.replace(/\/+$/, ''));
  };

/** Strips credentials from a URL before it is printed. */
export function redactUrl(raw: string): string {
  return raw.replace(/\/\/[^@/]*@/, '//***@');
}

export function defaultOf<T>(setting: Setting<T>, ctx: DefaultContext): T {
  const fallback = setting.default;
  return typeof fallback === 'function' ? (fallback as (ctx: DefaultContext) => T)(ctx) : fallback;
}

/**
 * Reads every setting of a table; an unset or empty variable, or one with a
 * problem, takes its default, and the problem is added to `problems` so all
 * of them are reported together.
 */
export function readTable<S>(table: SettingTable<S>, ctx: DefaultContext, problems: string[]): S {
  const out = {} as S;
  for (const key of Object.keys(table) as (keyof S)[]) {
    const setting = table[key];
    const raw = ctx.env[setting.env];
    const parsed = raw === undefined || raw === '' ? undefined : setting.parse(raw);
    if (parsed?.ok === false) problems.push(`${setting.env}: ${parsed.problem}`);
    out[key] = parsed?.ok ? parsed.value : defaultOf(setting, ctx);
  }
  return out;
}

/** undefined when unset, null when set but not a 32-byte key in hex or base64(url). */
export function parseSecretsKey(raw: string | undefined): Buffer | undefined | null {
  if (raw === undefined || raw.trim() === '') return undefined;
  const text = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) return null;
  const key = Buffer.from(text, 'base64');
  return key.length === 32 ? key : null;
}

export const secretsKey: Parser<Buffer | undefined> = (raw) => {
  const key = parseSecretsKey(raw);
  if (key === null) return bad('must be 32 bytes written as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)');
  return key === undefined ? undefined : ok(key);
};
