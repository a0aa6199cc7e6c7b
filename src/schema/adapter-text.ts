// The adapter's one-line description, for logs and status bars. A pure function of the adapter report's fields,
// kept below the GPU layer so the page can show what the worker reports without importing the GPU code
// (src/gpu/adapter.ts re-exports it next to AdapterReport).

/** The fields of an AdapterReport (src/gpu/adapter.ts) the description reads. */
export interface AdapterNaming {
  vendor: string;
  architecture: string;
  description: string;
  isFallbackAdapter: boolean;
  features: readonly string[];
}

/** One line for logs and status bars: "google swiftshader (fallback, CPU) · timestamp-query, subgroups". */
export function describeAdapter(r: AdapterNaming): string {
  const name =
    [r.vendor, r.architecture, r.description].filter((s) => s && s !== 'unknown').join(' ') || 'unknown adapter';
  const kind = r.isFallbackAdapter ? ' (software fallback: correct but slow)' : '';
  return `${name}${kind} · ${r.features.join(', ') || 'no optional features'}`;
}
