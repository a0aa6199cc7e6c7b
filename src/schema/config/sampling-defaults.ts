// The sampling_defaults knob applied: a run of a checkpoint whose generation_config.json states sampling defaults
// takes them for the knobs left at the lab's defaults, as vLLM's generation_config="auto" does
// (vllm-project/vllm#11164: LLM.get_default_sampling_params() loads the model's generation_config.json and the
// request's own values override it). TRL's GRPOTrainer instead builds GenerationConfig(do_sample=True,
// temperature=args.temperature, top_p=args.top_p, top_k=args.top_k, ...) from its own config
// (huggingface/trl, trl/trainer/grpo_trainer.py), which is what sampling_defaults 'lab' keeps. Pure.

import type { GenerationDefaults } from '../generation-defaults';
import { DEFAULT_CONFIG, type RLConfig } from './schema';
import { checkConfig } from './validate';

/** The knobs a generation_config.json may set, with its field names. */
const FROM_MODEL = [
  ['temperature', 'temperature'],
  ['top_p', 'topP'],
  ['top_k', 'topK'],
] as const;

/** What a resolution did: the config to run, and each knob taken from the model or kept (with why), in words. */
export interface SamplingResolution {
  config: RLConfig;
  /** Knobs set from generation_config.json, e.g. { temperature: 0.7 }. */
  applied: Partial<Pick<RLConfig, 'temperature' | 'top_p' | 'top_k'>>;
  /** Why a stated value was not used, one line each (changed by you, out of range, greedy). */
  kept: string[];
}

/**
 * `config` with the model's sampling defaults where sampling_defaults is 'model' and the knob is at the lab's
 * default. do_sample false (greedy decoding) is not followed (a group of identical completions has no signal);
 * its temperature/top_p/top_k are still the model's stated sampling values when it gives them. A value outside the
 * knob's range is kept out, named. Idempotent: a resolved config resolves to itself.
 */
export function resolveSamplingDefaults(config: RLConfig, model: GenerationDefaults | null): SamplingResolution {
  const out: SamplingResolution = { config, applied: {}, kept: [] };
  if (config.sampling_defaults !== 'model' || model === null) return out;
  if (model.doSample === false)
    out.kept.push('generation_config.json says do_sample false (greedy); the run samples, as GRPO needs');
  const next = { ...config };
  for (const [knob, field] of FROM_MODEL) {
    const value = model[field];
    if (value === undefined || value === config[knob]) continue;
    if (config[knob] !== DEFAULT_CONFIG[knob]) {
      out.kept.push(`${knob} ${config[knob]} (yours) over generation_config.json's ${value}`);
      continue;
    }
    const problems = checkConfig({ ...next, [knob]: value }).errors;
    if (problems.length) {
      out.kept.push(`generation_config.json's ${knob} ${value} is not usable (${problems[0]}); kept ${config[knob]}`);
      continue;
    }
    Object.assign(next, { [knob]: value });
    Object.assign(out.applied, { [knob]: value });
  }
  out.config = next;
  return out;
}

/** The resolution in one line for a run's source and the CLI: "sampling from generation_config.json: temperature 0.7, top_p 0.8". */
export function describeSamplingResolution(r: SamplingResolution): string {
  const applied = Object.entries(r.applied).map(([k, v]) => `${k} ${v}`);
  const parts = [...(applied.length ? [`sampling from generation_config.json: ${applied.join(', ')}`] : []), ...r.kept];
  return parts.join('; ');
}
