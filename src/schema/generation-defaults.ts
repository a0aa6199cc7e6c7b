// A checkpoint folder's sampling defaults, as its generation_config.json states them (do_sample, temperature,
// top_p, top_k): read without judging them, so the run config's sampling_defaults knob can decide what to use
// (src/schema/config/sampling-defaults.ts). Not the end-of-sequence ids (hf-folder.ts reads those from the same file).

/** The sampling fields of a generation_config.json that the lab has knobs for; absent fields stay undefined. */
export interface GenerationDefaults {
  doSample?: boolean;
  temperature?: number;
  topP?: number;
  topK?: number;
}

/**
 * The sampling defaults of a parsed generation_config.json object. A field of the wrong type is left out (the
 * file stays usable for its eos ids); null when the file states none of them.
 */
export function generationDefaults(json: Readonly<Record<string, unknown>> | null): GenerationDefaults | null {
  if (json === null) return null;
  const out: GenerationDefaults = {};
  if (typeof json.do_sample === 'boolean') out.doSample = json.do_sample;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const temperature = num(json.temperature);
  const topP = num(json.top_p);
  const topK = num(json.top_k);
  if (temperature !== undefined) out.temperature = temperature;
  if (topP !== undefined) out.topP = topP;
  if (topK !== undefined) out.topK = topK;
  return Object.keys(out).length ? out : null;
}
