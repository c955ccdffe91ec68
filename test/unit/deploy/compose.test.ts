import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

/** `${NAME:-default}` as compose reads it with NAME unset. */
const withDefaults = (s: string) => s.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');

/** The source a compiled entry point (`dist/bin/x.js`, built in the image) is built from. */
const sourceOf = (compiled: string) => compiled.replace(/^dist\//, '').replace(/\.js$/, '.ts');

describe('docker-compose.yml: PostgreSQL, Redis, a control plane and two proxies', () => {
  const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
  const services = compose.services;
  const proxies = Object.entries(services).filter(([, s]) => s.command?.includes('dist/bin/proxy.js'));

  it('has the four parts, the proxies twice', () => {
    expect(services.postgres?.image).to.match(/^postgres:/);
    expect(services.redis?.image).to.match(/^redis:/);
    expect(services['control-plane']?.command).to.include('dist/bin/control-plane.js');
    expect(proxies).to.have.length(2);
  });

  it('the proxies share Redis and reach the control plane by its service name, on ports of their own', () => {
    for (const [name, p] of proxies) {
      expect(p.environment?.CONTROL_PLANE_URL, name).to.equal('http://control-plane:8080');
      expect(p.environment?.REDIS_URL, name).to.equal('redis://redis:6379');
      expect(p.depends_on?.redis?.condition, name).to.equal('service_healthy');
      expect(p.depends_on?.['control-plane']?.condition, name).to.equal('service_healthy');
    }
    const hostPorts = Object.values(services).flatMap((s) => (s.ports ?? []).map((p) => p.split(':')[0]));
    expect(new Set(hostPorts).size).to.equal(hostPorts.length);
    expect(services['control-plane']?.environment?.DATABASE_URL).to.match(/@postgres:5432\//);
  });

  it('every Tollgate service runs a file that exists, is ready-checked on /readyz, and mounts a models file that exists by default', () => {
    for (const [name, s] of [['control-plane', services['control-plane']!] as const, ...proxies]) {
      const entry = s.command!.find((a) => a.startsWith('dist/bin/'))!;
      expect(existsSync(join(ROOT, sourceOf(entry))), `${name}: ${entry}`).to.equal(true);
      expect(s.healthcheck?.test.join(' '), name).to.include('/readyz');
      const mount = s.volumes!.map(withDefaults).find((v) => v.includes(':/app/config/models.json'))!;
      expect(mount, name).to.not.equal(undefined);
      expect(existsSync(join(ROOT, mount.split(':')[0]!)), `${name}: ${mount}`).to.equal(true);
      expect(s.environment?.MODELS_FILE).to.equal('/app/config/models.json');
    }
  });
});

describe('Dockerfile: the default command runs as the non-root user with no DATABASE_URL', () => {
  const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('#'));
  const text = lines.join('\n');

  it('runs as node, with DATA_DIR a directory node owns', () => {
    expect(lines.filter((l) => l.startsWith('USER ')).at(-1)).to.equal('USER node');
    const dataDir = /DATA_DIR=(\S+)/.exec(text)?.[1];
    expect(dataDir).to.equal('/app/data');
    expect(text).to.include(`chown node:node ${dataDir}`);
  });

  it('copies what exists and starts node itself (so SIGTERM reaches the process that drains) on a file that exists', () => {
    // A COPY from an earlier build stage (the compiled dist/) names that stage's files, not the repository's.
    for (const l of lines.filter((x) => x.startsWith('COPY ') && !x.startsWith('COPY --from='))) {
      for (const src of l.split(/\s+/).slice(1, -1)) expect(existsSync(join(ROOT, src)), src).to.equal(true);
    }
    const cmd = JSON.parse(lines.find((l) => l.startsWith('CMD '))!.slice(4)) as string[];
    expect(cmd[0]).to.equal('node');
    expect(text).to.include('RUN npm run build');
    expect(existsSync(join(ROOT, sourceOf(cmd.at(-1)!)))).to.equal(true);
  });
});
