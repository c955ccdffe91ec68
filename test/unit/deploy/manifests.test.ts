import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { parseModelCatalog } from '../../../shared/models.js';

const DIR = fileURLToPath(new URL('../../../deploy/kubernetes/', import.meta.url));

// The kinds the manifests may use, each with kubernetes-models' validator (the API's OpenAPI schemas, compiled offline).
const MODELS = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/Secret': Secret,
  'v1/ConfigMap': ConfigMap,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  // Each kind has its own spec; the checks below read what they need.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

function loadManifests(): Manifest[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((doc) => {
        if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]!.message}`);
        return { file, ...(doc.toJS() as Omit<Manifest, 'file'>) };
      }),
    );
}

const tollgateContainers = (m: Manifest): IContainer[] =>
  (m.spec.template.spec.containers as IContainer[]).filter((c) => c.image?.startsWith('tollgate:'));

describe('deploy/kubernetes: the manifests are valid Kubernetes objects wired to each other', () => {
  const manifests = loadManifests();
  const deployments = manifests.filter((m) => m.kind === 'Deployment');
  const env = (c: IContainer, name: string) => c.env?.find((e) => e.name === name);

  it('every document validates against the Kubernetes API schema of its kind', () => {
    expect(manifests.length).to.be.greaterThanOrEqual(9);
    for (const m of manifests) {
      const Model = MODELS[`${m.apiVersion}/${m.kind}` as keyof typeof MODELS];
      expect(Model, `${m.file}: ${m.apiVersion} ${m.kind} is not a kind these checks know`).to.not.equal(undefined);
      const { file: _file, ...object } = m;
      expect(() => new Model(object as never).validate(), `${m.file} ${m.kind} ${m.metadata.name}`).to.not.throw();
    }
  });

  it('the validator does catch a broken manifest', () => {
    const broken = structuredClone(deployments[0]!);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    const { file: _file, ...object } = broken;
    expect(() => new Deployment(object as never).validate()).to.throw(/containerPort/);
  });

  it('the control plane and the proxy run as a Deployment with a Service and a PodDisruptionBudget', () => {
    for (const component of ['control-plane', 'proxy']) {
      const name = `tollgate-${component}`;
      const deployment = deployments.find((m) => m.metadata.name === name)!;
      expect(deployment, name).to.not.equal(undefined);
      const labels = deployment.spec.template.metadata.labels as Record<string, string>;
      expect(deployment.spec.selector.matchLabels).to.deep.equal(labels);
      for (const kind of ['Service', 'PodDisruptionBudget']) {
        const m = manifests.find((x) => x.kind === kind && x.metadata.name === name)!;
        expect(m, `${kind} ${name}`).to.not.equal(undefined);
        const selector = (kind === 'Service' ? m.spec.selector : m.spec.selector.matchLabels) as Record<string, string>;
        expect(labels, `${kind} ${name} selects its pods`).to.include(selector);
      }
      const service = manifests.find((x) => x.kind === 'Service' && x.metadata.name === name)!;
      const ports = tollgateContainers(deployment)[0]!.ports!.map((p) => p.name);
      for (const p of service.spec.ports as { targetPort: string }[]) expect(ports).to.include(p.targetPort);
    }
    const proxy = deployments.find((m) => m.metadata.name === 'tollgate-proxy')!;
    expect(env(tollgateContainers(proxy)[0]!, 'CONTROL_PLANE_URL')?.value).to.equal('http://tollgate-control-plane:8080');
  });

  it('every Tollgate container: probes on /healthz and /readyz, resource requests, non-root, read-only root, drain time', () => {
    const found = deployments.flatMap((d) => tollgateContainers(d).map((c) => ({ d, c })));
    expect(found).to.have.length(3);
    for (const { d, c } of found) {
      const where = `${d.metadata.name}/${c.name}`;
      const probePath = (p: typeof c.livenessProbe) => p?.httpGet?.path ?? p?.exec?.command?.join(' ');
      expect(probePath(c.livenessProbe), where).to.include('/healthz');
      expect(probePath(c.startupProbe), where).to.include('/healthz');
      expect(probePath(c.readinessProbe), where).to.include('/readyz');
      expect(c.resources?.requests?.cpu, where).to.be.a('string');
      expect(c.resources?.requests?.memory, where).to.be.a('string');
      expect(c.resources?.limits?.memory, where).to.be.a('string');
      expect(d.spec.template.spec.securityContext.runAsNonRoot, where).to.equal(true);
      expect(c.securityContext?.allowPrivilegeEscalation, where).to.equal(false);
      expect(c.securityContext?.readOnlyRootFilesystem, where).to.equal(true);
      expect(c.securityContext?.capabilities?.drop, where).to.deep.equal(['ALL']);
      // The pod must outlive the drain: grace period > SHUTDOWN_GRACE_SECONDS.
      const grace = Number(env(c, 'SHUTDOWN_GRACE_SECONDS')?.value);
      expect(d.spec.template.spec.terminationGracePeriodSeconds, where).to.be.greaterThan(grace);
      // Metrics wider than loopback only with the token.
      if (env(c, 'METRICS_HOST')?.value === '0.0.0.0') expect(env(c, 'METRICS_TOKEN')?.valueFrom?.secretKeyRef, where).to.not.equal(undefined);
    }
  });

  it('secrets come by reference, only from keys the example Secret names, never as literal values', () => {
    const secret = manifests.find((m) => m.kind === 'Secret' && m.metadata.name === 'tollgate')!;
    const keys = Object.keys(secret.stringData ?? {});
    for (const d of deployments) {
      for (const c of tollgateContainers(d)) {
        for (const name of ['DATA_PLANE_TOKEN', 'DATABASE_URL', 'SECRETS_KEY', 'REDIS_URL', 'METRICS_TOKEN', 'PRIMARY_API_KEY']) {
          const e = env(c, name);
          if (!e) continue;
          expect(e.value, `${d.metadata.name} ${name}`).to.equal(undefined);
          expect(e.valueFrom?.secretKeyRef?.name).to.equal('tollgate');
          expect(keys).to.include(e.valueFrom!.secretKeyRef!.key);
        }
      }
    }
  });

  it('the models ConfigMap holds a models file Tollgate accepts, at the path the containers read', () => {
    const configMap = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 'tollgate-models')!;
    const { catalog, problems } = parseModelCatalog(JSON.parse(configMap.data!['models.json']!), { PRIMARY_API_KEY: 'x' });
    expect(problems).to.deep.equal([]);
    expect(catalog!.models.size).to.be.greaterThan(0);
    for (const d of deployments) for (const c of tollgateContainers(d)) expect(env(c, 'MODELS_FILE')?.value).to.equal('/app/config/models.json');
  });
});
