import { modelFromEntry, type ModelConfig } from '../../shared/models.js';

/** The model the in-process children bill: the bench alias at its models-file prices. */
export const BENCH_MODEL: ModelConfig = modelFromEntry({
  alias: 'tg/bench',
  provider: 'primary',
  upstream_model: 'bench-model',
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
  max_output_tokens: 4096,
});
