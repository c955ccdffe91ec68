import type { ModelConfig } from '../../shared/models.js';

/**
 * The order in which one call tries an alias's deployments. Without weights
 * it is the file's order (the first is primary). With weights the first is
 * picked by smooth weighted round-robin (nginx's): deterministic, so a 3:1
 * split over 400 calls is exactly 300/100, and interleaved rather than in
 * runs; the others follow by weight, as the ones to fail over to.
 */
export interface Balancer {
  order(model: ModelConfig): number[];
}

interface Wheel {
  weights: number[];
  total: number;
  current: number[];
  /** The others, heaviest first, for each pick (made once per pick, not per call). */
  rest: number[][];
}

export function createBalancer(): Balancer {
  const wheels = new Map<string, Wheel>();
  const fileOrder = new WeakMap<ModelConfig, number[]>();

  function wheelOf(model: ModelConfig): Wheel {
    let w = wheels.get(model.alias);
    if (!w) {
      const weights = model.deployments.map((d) => d.weight ?? 1);
      const byWeight = weights.map((_, i) => i).sort((a, b) => weights[b]! - weights[a]! || a - b);
      w = {
        weights,
        total: weights.reduce((a, b) => a + b, 0),
        current: weights.map(() => 0),
        rest: weights.map((_, i) => [i, ...byWeight.filter((j) => j !== i)]),
      };
      wheels.set(model.alias, w);
    }
    return w;
  }

  return {
    order(model) {
      if (model.deployments[0]!.weight === undefined) {
        let o = fileOrder.get(model);
        if (!o) fileOrder.set(model, (o = model.deployments.map((_, i) => i)));
        return o;
      }
      const w = wheelOf(model);
      let best = 0;
      for (let i = 0; i < w.current.length; i++) {
        w.current[i]! += w.weights[i]!;
        if (w.current[i]! > w.current[best]!) best = i;
      }
      w.current[best]! -= w.total;
      return w.rest[best]!;
    },
  };
}
