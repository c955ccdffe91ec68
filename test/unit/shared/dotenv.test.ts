import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadDotEnv } from '../../../shared/dotenv.js';

describe('.env', () => {
  it('fills in what the real environment lacks; the real environment wins', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tg-env-')), '.env');
    writeFileSync(path, '# settings\nPROXY_PORT=9081\nLOG_LEVEL=debug\nOPENAI_API_KEY="sk-quoted"\n');
    const env: NodeJS.ProcessEnv = { LOG_LEVEL: 'warn' };
    expect(loadDotEnv(env, path).sort()).to.deep.equal(['OPENAI_API_KEY', 'PROXY_PORT']);
    expect(env).to.deep.equal({ LOG_LEVEL: 'warn', PROXY_PORT: '9081', OPENAI_API_KEY: 'sk-quoted' });
  });

  it('is optional', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(loadDotEnv(env, join(tmpdir(), 'no-such-dir-tg', '.env'))).to.deep.equal([]);
    expect(env).to.deep.equal({});
  });
});
