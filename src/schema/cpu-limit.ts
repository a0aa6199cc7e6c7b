// Which models the CPU backend (the CPU twins of every kernel, 100-1000x slower than a GPU) is offered for.
// Kept apart from the loaders so the page can ask without pulling checkpoint code into its bundle.

import { parameterCount, type ModelConfig } from './model-config';

/** Largest model the CPU backend is offered for (nano: 55,680 parameters; micro: 191,232). */
export const CPU_MAX_PARAMETERS = 250_000;

/** Why the CPU backend cannot run this model, or null when it can. */
export function cpuRefusal(model: ModelConfig): string | null {
  const n = parameterCount(model);
  if (n <= CPU_MAX_PARAMETERS) return null;
  return (
    `the CPU backend runs models of at most ${CPU_MAX_PARAMETERS.toLocaleString('en-US')} parameters (it is 100-1000x slower than a GPU); ` +
    `this one has ${n.toLocaleString('en-US')}. Pick the nano or micro model, or a browser with WebGPU`
  );
}
