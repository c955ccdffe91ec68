import type { ModelCatalog, ModelConfig, ProviderConfig } from '../../shared/models.js';

/**
 * One place a call can be sent: an alias's deployment, with the model as the
 * request builders want it (the deployment's upstream model in place of the
 * primary's) and the response headers that name who answered.
 */
export interface DeploymentRef {
  /** `provider/upstream_model`: the label of metrics, logs, usage rows and the cooldown state. */
  id: string;
  /** Index among its alias's deployments (the balancer and affinity remember this). */
  index: number;
  model: ModelConfig;
  provider: ProviderConfig;
  /** `x-tollgate-model` and `x-tollgate-deployment`, made once. */
  headers: Readonly<Record<string, string>>;
}

/** Made once per model object (the catalog is fixed for the process), never per call. */
const refs = new WeakMap<ModelConfig, DeploymentRef[]>();

export function deploymentsOf(model: ModelConfig, catalog: ModelCatalog): DeploymentRef[] {
  let list = refs.get(model);
  if (!list) {
    list = model.deployments.map((d, index) => {
      const id = `${d.provider}/${d.upstream_model}`;
      // The primary keeps the catalog's own object, so caches keyed on it stay warm.
      const served =
        index === 0 && d.provider === model.provider && d.upstream_model === model.upstream_model
          ? model
          : { ...model, provider: d.provider, upstream_model: d.upstream_model };
      return {
        id,
        index,
        model: served,
        provider: catalog.providers.get(d.provider)!,
        headers: Object.freeze({ 'x-tollgate-model': model.alias, 'x-tollgate-deployment': id }),
      };
    });
    refs.set(model, list);
  }
  return list;
}

/** The primary deployment: what an alias with one deployment and no fallback is always served by. */
export function primaryOf(model: ModelConfig, catalog: ModelCatalog): DeploymentRef {
  return deploymentsOf(model, catalog)[0]!;
}

/**
 * The alias and the fallbacks this key may use, in the order they are tried:
 * a fallback's own fallbacks come right after it (calling it directly would
 * try them next too). The
 * models file was checked for loops, but a visited set keeps a chain finite
 * whatever it holds.
 */
export function chainOf(model: ModelConfig, catalog: ModelCatalog, allowed: readonly string[]): ModelConfig[] {
  if (!model.fallbacks.length) return [model];
  const chain = [model];
  const seen = new Set([model.alias]);
  const visit = (m: ModelConfig): void => {
    for (const alias of m.fallbacks) {
      const next = catalog.models.get(alias);
      if (!next || seen.has(alias)) continue;
      seen.add(alias);
      // A fallback the team may not call is absent, and so are the fallbacks behind it.
      if (!allowed.includes(alias)) continue;
      chain.push(next);
      visit(next);
    }
  };
  visit(model);
  return chain;
}

/** An alias whose calls may go elsewhere than the primary: balancing, failover or fallback apply. */
export function isRouted(model: ModelConfig): boolean {
  return model.deployments.length > 1 || model.fallbacks.length > 0;
}
