// "Try a real model": a first RL experiment on an instruct model, as a partial config over the GRPO preset, and the
// models it offers. The chat template on (the model reads each prompt as a user message), LoRA on every projection
// (r 16, alpha 32: a few million trained values instead of every weight, the base frozen), the think/answer format
// reward around a task a person recognises (word problems, countdown, or their own prompt list), and the sampling
// knobs from the model's generation_config.json. Pure data: the page shows it, the worker sizes it, tests run it.

import type { RLConfig } from './schema';

/** The tasks the experiment offers, with their picker labels. */
export const REAL_MODEL_TASKS = [
  { task: 'word_problems', label: 'Word problems ("Ana has 12 apples...")' },
  { task: 'countdown', label: 'Countdown (24 from 3, 8, 8, 3)' },
  { task: 'prompts', label: 'Your own prompt list' },
] as const;
export type RealModelTask = (typeof REAL_MODEL_TASKS)[number]['task'];

/** A model the experiment offers: a shipped folder to try the path now, or a hub id whose config.json is recorded. */
export interface RealModelChoice {
  /** What the checkpoint field is set to: a shipped folder, or a hub id (the hub download takes it from there). */
  checkpoint: string;
  label: string;
  /** The recorded config.json (src/schema/fixtures/configs/<name>.json) the estimates read; null for a shipped folder. */
  recordedConfig: string | null;
  /** One line on what it is. */
  note: string;
}

/**
 * The shipped tiny Qwen2 folder first (random weights, a ChatML template: it trains now, it learns nothing), then
 * instruct models smallest first. SmolLM2-135M-Instruct has the base model's architecture (recorded as smollm2-135m).
 */
export const REAL_MODEL_CHOICES: readonly RealModelChoice[] = [
  {
    checkpoint: 'models/tiny-qwen2/',
    label: 'tiny-qwen2 (shipped)',
    recordedConfig: null,
    note: "Qwen2's architecture and ChatML template at a toy size with random weights: tries the whole path now, learns nothing",
  },
  {
    checkpoint: 'HuggingFaceTB/SmolLM2-135M-Instruct',
    label: 'SmolLM2-135M-Instruct',
    recordedConfig: 'smollm2-135m',
    note: 'the smallest instruct model worth trying; Llama architecture, 49k vocabulary',
  },
  {
    checkpoint: 'Qwen/Qwen2.5-0.5B-Instruct',
    label: 'Qwen2.5-0.5B-Instruct',
    recordedConfig: 'qwen2.5-0.5b-instruct',
    note: 'the usual GRPO demo model; 152k vocabulary',
  },
  {
    checkpoint: 'Qwen/Qwen3-0.6B',
    label: 'Qwen3-0.6B',
    recordedConfig: 'qwen3-0.6b',
    note: 'thinks in <think> tags already; q/k norms',
  },
  {
    checkpoint: 'meta-llama/Llama-3.2-1B-Instruct',
    label: 'Llama-3.2-1B-Instruct',
    recordedConfig: 'llama-3.2-1b-instruct',
    note: 'gated on the hub: needs a token; 128k vocabulary',
  },
];

/** The experiment's knobs over the GRPO preset, for a model and a task. */
export function realModelExperiment(
  checkpoint: string,
  task: RealModelTask,
): Partial<RLConfig> & Pick<RLConfig, 'checkpoint' | 'task'> {
  return {
    checkpoint,
    task,
    answer_format: 'think',
    chat_template: true,
    sampling_defaults: 'model',
    // LoRA on every projection (PEFT's all-linear without the head), alpha = 2r as PEFT examples set it.
    lora_rank: 16,
    lora_alpha: 32,
    lora_targets: null,
    learning_rate: 1e-4,
    // No reference model: beta 0, as DAPO and Dr. GRPO recipes run (half the frozen weights' memory).
    beta: 0,
    train_batch_size: 4,
    num_generations: 8,
    // The think wrapper judges up to 207 characters of a word problem's answer (countdown's: about 70); a longer
    // completion scores 0 as overlong, so more tokens than this would only be cut.
    max_completion_length: 64,
    steps: 100,
    eval_every: 20,
    eval_items: 20,
    eval_num_generations: 4,
    save_every: 10,
  };
}
