/** A CLI failure with its exit code: 2 for bad usage, 1 for a refusal or failure. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const usageError = (message: string, command?: string) =>
  new CliError(`${message}\nRun \`npm run -s cli -- help${command ? ` ${command}` : ''}\` for usage.`, 2);
