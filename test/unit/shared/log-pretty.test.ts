import { expect } from 'chai';
import { prettyLine } from '../../../shared/log-pretty.js';

describe('log lines at a terminal', () => {
  it('reads as time, level, message and fields', () => {
    const time = Date.UTC(2026, 0, 2, 3, 4, 5);
    const line = prettyLine(
      JSON.stringify({ level: 40, time, pid: 1, hostname: 'h', name: 'tollgate-all', msg: 'metrics port in use', port: 9464, req: { id: 'r' } }),
      false,
    );
    expect(line).to.equal(`${new Date(time).toTimeString().slice(0, 8)} WARN  metrics port in use  port=9464 req={"id":"r"}\n`);
  });

  it('keeps what pino redacted redacted, and passes a line that is not JSON through', () => {
    expect(prettyLine(JSON.stringify({ level: 30, msg: 'x', session: { token: '[redacted]' } }), false)).to.include('session={"token":"[redacted]"}');
    expect(prettyLine('plain\n', false)).to.equal('plain\n');
  });

  it('prints an error’s stack under its line', () => {
    const line = prettyLine(
      JSON.stringify({ level: 50, msg: 'failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x' } }),
      true,
    );
    expect(line).to.include('\x1b[31mERROR\x1b[0m failed').and.include('\nError: boom\n    at x').and.not.include('err=');
  });
});
