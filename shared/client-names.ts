import type { ModelCatalog, ModelConfig } from './models.js';

/**
 * The names clients send for an alias (`client_names` in the models file):
 * Claude Code sends `claude-sonnet-4-6` unless every developer sets model
 * variables, so the operator names what each alias answers to. A call naming
 * one is the alias's call in every respect; the proxy resolves the name once,
 * at the model step, and carries the alias from there.
 */
interface NameIndex {
  exact: Map<string, ModelConfig>;
  /** Longest prefix first, so `claude-sonnet-*` wins over `claude-*`. */
  prefixes: { prefix: string; model: ModelConfig }[];
}

/** Built once per catalog (a reload makes a new catalog), not per call. */
const indexes = new WeakMap<ModelCatalog, NameIndex>();

function indexOf(catalog: ModelCatalog): NameIndex {
  let index = indexes.get(catalog);
  if (index) return index;
  index = { exact: new Map(), prefixes: [] };
  for (const model of catalog.models.values()) {
    for (const name of model.client_names ?? []) {
      if (name.endsWith('*')) index.prefixes.push({ prefix: name.slice(0, -1), model });
      else index.exact.set(name, model);
    }
  }
  index.prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
  indexes.set(catalog, index);
  return index;
}

/**
 * The model a name means: an alias itself, then a client name written out,
 * then the longest matching prefix. An exact name beats a prefix so that an
 * operator can send one Claude model elsewhere than the rest of its family.
 */
export function modelByName(catalog: ModelCatalog, name: string): ModelConfig | undefined {
  const model = catalog.models.get(name);
  if (model) return model;
  const index = indexOf(catalog);
  const exact = index.exact.get(name);
  if (exact) return exact;
  return index.prefixes.find((p) => name.startsWith(p.prefix))?.model;
}

/** One entry of a model list: the name a client may send, and the alias it means. */
export interface ListedModel {
  id: string;
  model: ModelConfig;
}

/**
 * A model list's entries: each alias, then the client names written out (not
 * patterns) of those aliases. Claude Code's gateway discovery keeps only ids
 * with `claude` or `anthropic` in them, so its names must be listed themselves.
 */
export function listedModels(catalog: ModelCatalog, aliases: readonly string[]): ListedModel[] {
  const models = aliases.flatMap((a) => {
    const model = catalog.models.get(a);
    return model ? [model] : [];
  });
  const names = models.flatMap((model) => (model.client_names ?? []).filter((n) => !n.endsWith('*')).map((id) => ({ id, model })));
  return [...models.map((model) => ({ id: model.alias, model })), ...names];
}
