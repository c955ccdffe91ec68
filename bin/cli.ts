/**
 * `npm run -s cli -- <command> [options]`; `npm run -s cli -- help` lists the commands.
 * Only the JSON answer goes to stdout (or the --out file); problems go to stderr.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../shared/config.js';
import { loadDotEnv } from '../shared/dotenv.js';
import { AppError } from '../shared/errors.js';
import { COMMANDS, commandHelp, mainHelp, type Command } from './cli/commands.js';
import { CliError, usageError } from './cli/errors.js';
import { openOutput } from './cli/out-file.js';
import { onServiceStore } from './cli/store.js';

function findCommand(name: string): Command {
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw usageError(`unknown command "${name}"; the commands are ${COMMANDS.map((c) => c.name).join(', ')}.`);
  return command;
}

/** Flags of `command`; unknown, repeated-valueless or stray arguments are usage errors naming what was wrong. */
function parseFlags(command: Command, args: string[]): { help: boolean; values: Record<string, string | undefined> } {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(command.options.map((o) => [o.name, { type: 'string' as const }])),
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    throw usageError(`${command.name}: ${(err as Error).message.replace(/\. To specify a positional.*$/s, '.')}`, command.name);
  }
  if (parsed.values.help) return { help: true, values: {} };
  if (parsed.positionals.length) {
    throw usageError(
      `${command.name}: unexpected argument${parsed.positionals.length > 1 ? 's' : ''} ${parsed.positionals.map((p) => JSON.stringify(p)).join(' ')} (values need a --flag; quote names with spaces).`,
      command.name,
    );
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const missing = command.options.filter((o) => o.required && values[o.name] === undefined).map((o) => `--${o.name}`);
  if (missing.length) throw usageError(`${command.name}: missing ${missing.join(', ')}.`, command.name);
  return { help: false, values: values as Record<string, string | undefined> };
}

async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    if (first === 'help' && rest.length) {
      if (rest.length > 1) throw usageError(`help takes one command name, got ${rest.length}.`);
      process.stdout.write(commandHelp(findCommand(rest[0]!)));
      return;
    }
    if (first === undefined) throw new CliError(`no command given.\n\n${mainHelp()}`, 2);
    process.stdout.write(mainHelp());
    return;
  }
  const command = findCommand(first);
  const { help, values } = parseFlags(command, rest);
  if (help) {
    process.stdout.write(commandHelp(command));
    return;
  }
  const problems = command.validate(values);
  if (problems.length) throw usageError(`${command.name}: ${problems.join('; ')}.`, command.name);

  let config;
  try {
    loadDotEnv(process.env);
    config = loadConfig(process.env, 'cli');
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, 2);
    throw err;
  }
  const output = openOutput(values.out);
  try {
    output.write(await onServiceStore(config, command.work(values)));
  } catch (err) {
    output.abandon();
    throw err;
  }
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof CliError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(err.exitCode);
  }
  if (err instanceof AppError && err.expose) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`failed: ${(err as Error).message}\n`);
  process.exit(1);
}
