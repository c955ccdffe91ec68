import { isObject } from './json.js';

/**
 * The checks of the models file that look across entries: alias prefix and
 * duplicates, providers a model names, fallbacks that name an unknown alias or
 * lead back to where they started. They read the raw entries (leniently: a
 * field of the wrong type was already reported by the schema) so that they run
 * in the same round as the schema's checks.
 */
export interface CrossCheckInput {
  models: readonly unknown[];
  /** Undefined when the prefix itself is invalid: that was reported, and every alias would fail against it. */
  aliasPrefix: string | undefined;
  providerNames: ReadonlySet<string>;
}

export interface CrossCheckProblems {
  /** Problems of one entry, by its index in `models`. */
  byIndex: Map<number, string[]>;
  /** Problems that belong to several entries (fallback cycles). */
  shared: string[];
}

export function crossCheckModels({ models, aliasPrefix, providerNames }: CrossCheckInput): CrossCheckProblems {
  const byIndex = new Map<number, string[]>();
  const report = (i: number, message: string): void => {
    byIndex.set(i, [...(byIndex.get(i) ?? []), message]);
  };
  const aliases = new Set<string>();
  const fallbacksOf = new Map<string, string[]>();
  models.forEach((m, i) => {
    if (!isObject(m)) return;
    if (typeof m.alias === 'string' && m.alias) {
      if (aliasPrefix !== undefined && (!m.alias.startsWith(`${aliasPrefix}/`) || m.alias.length <= aliasPrefix.length + 1)) {
        report(i, `alias must start with "${aliasPrefix}/"`);
      }
      if (aliases.has(m.alias)) report(i, `duplicate alias "${m.alias}"`);
      aliases.add(m.alias);
    }
    if (typeof m.provider === 'string' && m.provider && !providerNames.has(m.provider)) {
      report(i, `provider: unknown provider "${m.provider}"`);
    }
    if (Array.isArray(m.deployments)) {
      m.deployments.forEach((d, j) => {
        if (isObject(d) && typeof d.provider === 'string' && d.provider && !providerNames.has(d.provider)) {
          report(i, `deployments[${j}].provider: unknown provider "${d.provider}"`);
        }
      });
    }
  });
  clientNameClashes(models, aliases, report);
  models.forEach((m, i) => {
    if (!isObject(m) || typeof m.alias !== 'string' || !Array.isArray(m.fallbacks)) return;
    const names = m.fallbacks.filter((f): f is string => typeof f === 'string');
    for (const f of names) if (!aliases.has(f)) report(i, `fallbacks: unknown alias "${f}"`);
    if (!fallbacksOf.has(m.alias))
      fallbacksOf.set(
        m.alias,
        names.filter((f) => aliases.has(f)),
      );
  });
  return { byIndex, shared: fallbackCycles(fallbacksOf) };
}

/**
 * A client name means one alias: claimed twice (by two entries, or twice by
 * one) or equal to an alias, a call naming it could not say whose it is. Each
 * later claim is reported at its entry, naming the entry that claimed it first.
 */
function clientNameClashes(models: readonly unknown[], aliases: ReadonlySet<string>, report: (i: number, message: string) => void): void {
  const claimedBy = new Map<string, string>();
  models.forEach((m, i) => {
    if (!isObject(m) || !Array.isArray(m.client_names)) return;
    const own = typeof m.alias === 'string' ? m.alias : `models[${i}]`;
    m.client_names.forEach((name, j) => {
      if (typeof name !== 'string' || !name) return;
      const first = claimedBy.get(name);
      if (first !== undefined) report(i, `client_names[${j}]: "${name}" is already a client name of model "${first}"`);
      else if (aliases.has(name)) report(i, `client_names[${j}]: "${name}" is an alias`);
      else claimedBy.set(name, own);
    });
  });
}

/**
 * Each loop of fallbacks once, written from the alias that sorts first
 * (`tg/a → tg/b → tg/a`): a loop would have a failing call go round forever.
 */
function fallbackCycles(fallbacksOf: ReadonlyMap<string, readonly string[]>): string[] {
  const found = new Map<string, string>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (alias: string): void => {
    state.set(alias, 'open');
    stack.push(alias);
    for (const next of fallbacksOf.get(alias) ?? []) {
      if (state.get(next) === 'open') {
        const loop = stack.slice(stack.indexOf(next));
        const start = loop.indexOf([...loop].sort()[0]!);
        const ordered = [...loop.slice(start), ...loop.slice(0, start)];
        const text = [...ordered, ordered[0]].join(' → ');
        found.set(text, `model "${ordered[0]}": fallbacks form a loop: ${text}`);
      } else if (state.get(next) === undefined) {
        visit(next);
      }
    }
    stack.pop();
    state.set(alias, 'done');
  };
  for (const alias of fallbacksOf.keys()) if (state.get(alias) === undefined) visit(alias);
  return [...found.values()];
}
