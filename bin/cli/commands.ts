import { bootstrapOrg, validateBootstrap, type BootstrapInput } from '../../control-plane/services/orgs/bootstrap.js';
import { issueConsoleToken, validateConsoleToken, type ConsoleTokenInput } from '../../control-plane/services/orgs/console-token.js';
import type { StoreWork } from './store.js';
import { keyPatch, rotateBody } from '../../control-plane/console/keys.js';
import { parseValid } from '../../control-plane/http/body.js';
import { operatorRotateKey, operatorUpdateKey } from '../../control-plane/services/workspaces/key-changes.js';

export interface OptionSpec {
  name: string;
  value: string;
  required: boolean;
  help: string;
}

/** One CLI command: its flags, its help, and the work it does on the store. */
export interface Command {
  name: string;
  summary: string;
  description: string;
  options: OptionSpec[];
  /** Problems with the flag values, each naming its flag. */
  validate(values: Record<string, string | undefined>): string[];
  work(values: Record<string, string | undefined>): StoreWork<unknown>;
}

const OUT: OptionSpec = {
  name: 'out',
  value: '<file>',
  required: false,
  help: 'write the JSON answer to <file> (created with mode 0600; an existing file is never overwritten) instead of stdout',
};

function bootstrapInput(v: Record<string, string | undefined>): BootstrapInput {
  return { slug: v.org ?? '', name: v.name ?? '', ownerEmail: v.owner ?? '', ownerName: v['owner-name'] };
}

function consoleTokenInput(v: Record<string, string | undefined>): ConsoleTokenInput {
  return { slug: v.org ?? '', ownerEmail: v.owner ?? '' };
}

const ACTOR: OptionSpec[] = [
  { name: 'org', value: '<slug>', required: true, help: "the organization's slug" },
  { name: 'owner', value: '<email>', required: true, help: 'the owner or admin (user name) the change is made and audited as' },
  { name: 'key', value: '<key_id>', required: true, help: "the key's id (as the key listings show it)" },
];

/** A flag's value as the PATCH body takes it: `none` clears, numbers are numbers. */
const PATCH_FLAGS: { flag: string; field: string; kind: 'text' | 'number' }[] = [
  { flag: 'name', field: 'name', kind: 'text' },
  { flag: 'budget-usd', field: 'budget_usd', kind: 'number' },
  { flag: 'budget-period', field: 'budget_period', kind: 'text' },
  { flag: 'rpm', field: 'rpm', kind: 'number' },
  { flag: 'tpm', field: 'tpm', kind: 'number' },
  { flag: 'expires-at', field: 'expires_at', kind: 'text' },
];

function patchBody(v: Record<string, string | undefined>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const p of PATCH_FLAGS) {
    const raw = v[p.flag];
    if (raw === undefined) continue;
    body[p.field] = raw === 'none' && p.field !== 'name' ? null : p.kind === 'number' ? Number(raw) : raw;
  }
  return body;
}

function keyCommandProblems(v: Record<string, string | undefined>): string[] {
  const problems = validateConsoleToken(consoleTokenInput(v));
  if (!/^[0-9a-f-]{36}$/i.test(v.key ?? '')) problems.push('--key must be a key id (a UUID)');
  return problems;
}

const KEY_COMMANDS: Command[] = [
  {
    name: 'key-update',
    summary: "change a key's name, budget and its period, limits or expiry",
    description:
      'PATCH /v1/keys/{key_id} as an owner or admin, audited as them (`key.update`); every proxy has the\n' +
      'change within seconds. Answers the key as JSON. `none` clears a budget, period, limit or expiry.\n' +
      'Periods are UTC calendar periods (week = ISO week from Monday); see docs/keys.md.',
    options: [
      ...ACTOR,
      { name: 'name', value: '"<name>"', required: false, help: 'a new name' },
      { name: 'budget-usd', value: '<usd>|none', required: false, help: 'the budget in USD' },
      { name: 'budget-period', value: 'day|week|month|none', required: false, help: 'the budget per period, or none for a lifetime budget' },
      { name: 'rpm', value: '<n>|none', required: false, help: 'requests per minute' },
      { name: 'tpm', value: '<n>|none', required: false, help: 'tokens per minute' },
      { name: 'expires-at', value: '<ISO 8601>|none', required: false, help: 'when the key stops, e.g. 2027-01-01T00:00:00Z' },
      OUT,
    ],
    validate: (v) => {
      const problems = keyCommandProblems(v);
      if (!Object.keys(patchBody(v)).length)
        problems.push('name at least one change (--name, --budget-usd, --budget-period, --rpm, --tpm, --expires-at)');
      return problems;
    },
    work: (v) => {
      const actor = consoleTokenInput(v);
      const patch = patchBody(v);
      return {
        servicePath: '/v1/local/key-update',
        serviceBody: { slug: actor.slug, owner: actor.ownerEmail, key_id: v.key, patch },
        direct: (deps) => operatorUpdateKey(deps, actor, v.key!, parseValid(keyPatch, patch)),
      };
    },
  },
  {
    name: 'key-rotate',
    summary: 'give a key a new secret (shown once); the old one works until its grace ends',
    description:
      'POST /v1/keys/{key_id}/rotate as an owner or admin, audited as them (`key.rotate`). Answers JSON\n' +
      '{id, key, prefix, previous_expires_at}: `key` is the new secret, shown this once (use --out to keep it\n' +
      'out of the terminal). The old secret works until previous_expires_at, then stops on every proxy.',
    options: [
      ...ACTOR,
      { name: 'grace-seconds', value: '<0..604800>', required: false, help: 'how long the old secret keeps working (default 86400)' },
      OUT,
    ],
    validate: keyCommandProblems,
    work: (v) => {
      const actor = consoleTokenInput(v);
      const rotate = v['grace-seconds'] === undefined ? {} : { grace_seconds: Number(v['grace-seconds']) };
      return {
        servicePath: '/v1/local/key-rotate',
        serviceBody: { slug: actor.slug, owner: actor.ownerEmail, key_id: v.key, rotate },
        direct: (deps) => operatorRotateKey(deps, actor, v.key!, parseValid(rotateBody, rotate).grace_seconds),
      };
    },
  },
];

export const COMMANDS: Command[] = [
  {
    name: 'bootstrap',
    summary: 'create an organization, its workspace and its owner; answer a console token',
    description:
      'Creates an organization, its default workspace (with the same slug) and its owner, and answers\n' +
      'JSON {org_id, org_slug, workspace_id, workspace_slug, owner_user_id, console_token, expires_at}.\n' +
      'The console token lasts SESSION_TTL_SECONDS (12 h by default); `console-token` issues another.\n' +
      'An existing slug is refused and nothing changes; `console-token` gives its owner a new token.',
    options: [
      { name: 'org', value: '<slug>', required: true, help: 'organization and workspace slug: 1-63 lowercase letters, digits or dashes' },
      { name: 'name', value: '"<name>"', required: true, help: "the organization's display name" },
      { name: 'owner', value: '<email>', required: true, help: "the owner's email address (their user name)" },
      { name: 'owner-name', value: '"<Given Family>"', required: false, help: "the owner's name; the last word is the family name" },
      OUT,
    ],
    validate: (v) => validateBootstrap(bootstrapInput(v)),
    work: (v) => {
      const input = bootstrapInput(v);
      return {
        servicePath: '/v1/local/bootstrap',
        serviceBody: {
          slug: input.slug,
          name: input.name,
          owner: input.ownerEmail,
          ...(input.ownerName === undefined ? {} : { owner_name: input.ownerName }),
        },
        direct: (deps) => bootstrapOrg(deps, input),
      };
    },
  },
  {
    name: 'console-token',
    summary: "issue a new console token for an existing organization's owner or admin",
    description:
      'Opens a new console session for an active owner or admin of an existing organization and answers\n' +
      'JSON {org_id, org_slug, user_id, console_token, expires_at}: the way back in without SSO.\n' +
      'Earlier tokens keep working until they expire; the audit log records `session.issue`.',
    options: [
      { name: 'org', value: '<slug>', required: true, help: "the organization's slug" },
      { name: 'owner', value: '<email>', required: true, help: 'the user name (email) of one of its owners or admins' },
      OUT,
    ],
    validate: (v) => validateConsoleToken(consoleTokenInput(v)),
    work: (v) => {
      const input = consoleTokenInput(v);
      return {
        servicePath: '/v1/local/console-token',
        serviceBody: { slug: input.slug, owner: input.ownerEmail },
        direct: (deps) => issueConsoleToken(deps, input),
      };
    },
  },
  ...KEY_COMMANDS,
];

const PROGRAM = 'npm run -s cli --';

const SETTINGS =
  'The CLI uses the store the service uses, read from the same settings: DATABASE_URL, else the\n' +
  'embedded store in DATA_DIR (default ./data). While `npm start` holds the embedded store the CLI asks\n' +
  'it to do the work; a service on CONTROL_PLANE_PORT (default 8080) that uses another store than\n' +
  'these settings name makes the CLI refuse rather than write where the service does not read.';

const EXIT_CODES = 'Exit codes: 0 done, 1 refused or failed (the reason is on stderr), 2 bad usage.';

export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 'help [command]'.length) + 2;
  return [
    'Tollgate command-line tool.',
    '',
    `usage: ${PROGRAM} <command> [options]`,
    '',
    'commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    `  ${'help [command]'.padEnd(width)}show this help, or a command's`,
    '',
    `Run \`${PROGRAM} help <command>\` or \`${PROGRAM} <command> --help\` for a command's options.`,
    '',
    SETTINGS,
    '',
    EXIT_CODES,
    '',
  ].join('\n');
}

export function commandHelp(c: Command): string {
  const synopsis = c.options.map((o) => (o.required ? `--${o.name} ${o.value}` : `[--${o.name} ${o.value}]`)).join(' ');
  const flags = [...c.options.map((o) => [`--${o.name} ${o.value}`, o.help]), ['-h, --help', 'show this help']];
  const width = Math.max(...flags.map(([f]) => f!.length)) + 2;
  return [
    `usage: ${PROGRAM} ${c.name} ${synopsis}`,
    '',
    c.description,
    '',
    'options:',
    ...flags.map(([f, h]) => `  ${f!.padEnd(width)}${h}`),
    '',
    SETTINGS,
    '',
    EXIT_CODES,
    '',
  ].join('\n');
}
