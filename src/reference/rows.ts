// Row view of a host tensor: the last dimension is the row, everything before it counts rows.
import type { HostTensor } from '../core/host-tensor';

export function rowsCols(t: HostTensor, what: string): { rows: number; cols: number } {
  if (t.shape.length === 0) throw new Error(`${what}: expected at least 1 dimension`);
  const cols = t.shape[t.shape.length - 1];
  return { rows: cols === 0 ? 0 : t.data.length / cols, cols };
}
