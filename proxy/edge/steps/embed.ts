import { embeddingsCall, parseEmbeddings } from '../../wire/embeddings.js';
import { readBody } from '../../request-body.js';
import type { CallState, EdgeDeps, Modelled, StepOutcome } from './step.js';

/** Step `parse` of an embeddings call (413, 400): the body read, `model` and `input` checked. */
export async function parseEmbeddingsBody(s: CallState, deps: EdgeDeps): Promise<StepOutcome> {
  s.call = parseEmbeddings(await readBody(s.req, deps.config.proxy.maxBodyBytes));
  return undefined;
}

/** Step `access` of an embeddings call (400): the provider must have a Chat Completions base to ask. */
export function planEmbeddings(s: Modelled): StepOutcome {
  s.up = embeddingsCall(s.call, s.model, s.provider);
  return undefined;
}
