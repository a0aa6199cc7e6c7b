// The rollout inspector's records of a rollout step: which groups are inspected, and for each of their completions
// the text, rewards and per-token planes (log-probs, entropy, ratio, advantage, clip side, KL, loss share, weight,
// value) from the last optimizer step that used the row; and every group of the batch in brief (text, reward,
// pass, advantage; no token planes). Plain data for stream.ts's GroupRecord and GroupSummary; not the UI.

import type { ScoreResult, UpdateResult } from '../learners/learner';
import type { StepRollouts } from '../algorithm/rollouts';
import { completionPasses } from './dynamics';
import type { CompletionRecord, GroupRecord, GroupSummary } from '../../schema/stream';

/** Row r (of padded length S) is left out of the loss: the mask drops its first token though it has tokens. */
function rowMasked(mask: Float32Array, r: number, S: number, len: number): boolean {
  return mask[r * S] === 0 && len > 0;
}

/** The task item of group g (G rows each): dynamic sampling keeps whole groups, so rows per item stay G. */
function itemOfGroup(ro: StepRollouts, g: number, G: number) {
  return ro.items[Math.floor((g * G) / (ro.rollout.rows / ro.items.length))];
}

/** The rows of the first `groups` groups of G (their rows are contiguous), at most the batch's N rows. */
export function inspectedRows(groups: number, N: number, G: number): Set<number> {
  const rows = new Set<number>();
  for (let g = 0; g < Math.min(groups, N / G); g++) for (let i = 0; i < G; i++) rows.add(g * G + i);
  return rows;
}

/**
 * The inspected groups with per-token records. `results[u]` is optimizer step u's outcome over the batch rows
 * `updates[u].rows` (its `inspected` map is keyed by row within that minibatch); S is the padded completion length.
 */
export function groupRecords(
  ro: StepRollouts,
  advantages: Float32Array,
  mask: Float32Array,
  scored: Pick<ScoreResult, 'oldLogp' | 'values'> | null,
  results: UpdateResult[],
  updates: { rows: number[] }[],
  inspectRows: Set<number>,
  G: number,
  S: number,
): GroupRecord[] {
  const rollout = ro.rollout;
  // Row -> planes, from the last update that inspected it.
  const planes = new Map<number, Record<string, Float32Array>>();
  results.forEach((res, u) => {
    for (const [i, rec] of res.inspected) planes.set(updates[u].rows[i], rec);
  });
  const groups: GroupRecord[] = [];
  const rowsByGroup = new Map<number, number[]>();
  for (const r of [...inspectRows].sort((a, b) => a - b)) {
    const g = Math.floor(r / G);
    rowsByGroup.set(g, [...(rowsByGroup.get(g) ?? []), r]);
  }
  for (const [g, rows] of rowsByGroup) {
    const item = itemOfGroup(ro, g, G);
    const completions: CompletionRecord[] = rows.map((r) => {
      const len = rollout.lengths[r];
      const pl = planes.get(r);
      const sl = (x: Float32Array | undefined) => (x ? Float32Array.from(x.subarray(0, len)) : new Float32Array(len));
      const rowSlice = (x: Float32Array | undefined) =>
        x ? Float32Array.from(x.subarray(r * S, r * S + len)) : new Float32Array(0);
      const logpOld = scored?.oldLogp ? rowSlice(scored.oldLogp) : sl(pl?.logp);
      return {
        text: ro.texts[r],
        length: len,
        finished: rollout.finished[r],
        reward: ro.rewards[r],
        rewards: Object.fromEntries(Object.entries(ro.parts).map(([k, v]) => [k, v[r]])),
        reason: ro.verdicts[r].reason,
        masked: rowMasked(mask, r, S, len),
        tokens: {
          tokens: Uint32Array.from(rollout.tokens.subarray(r * S, r * S + len)),
          logpOld,
          logp: sl(pl?.logp),
          logpSampler: Float32Array.from(rollout.logprobs.subarray(r * S, r * S + len)),
          entropy: sl(pl?.entropy),
          ratio: sl(pl?.ratio),
          advantage: Float32Array.from(advantages.subarray(r * S, r * S + len)),
          clipSide: Int8Array.from(sl(pl?.clip_side)),
          kl: sl(pl?.kl),
          loss: sl(pl?.contribution),
          weight: sl(pl?.weight),
          value: scored?.values ? rowSlice(scored.values) : new Float32Array(0),
        },
      };
    });
    groups.push({ index: g, prompt: item.prompt, answer: item.answer, completions });
  }
  return groups;
}

/**
 * Every group of the batch in brief: each completion's text, reward, pass verdict and advantage (the mean of its
 * loss tokens' A; 0 when the mask drops it). Small enough to keep for every step: no token planes.
 */
export function groupSummaries(
  ro: StepRollouts,
  advantages: Float32Array,
  mask: Float32Array,
  G: number,
  S: number,
): GroupSummary[] {
  const rollout = ro.rollout;
  const out: GroupSummary[] = [];
  for (let g = 0; g < rollout.rows / G; g++) {
    const item = itemOfGroup(ro, g, G);
    const completions = Array.from({ length: G }, (_, i) => {
      const r = g * G + i;
      let sum = 0;
      let n = 0;
      for (let t = r * S; t < (r + 1) * S; t++) {
        if (!mask[t]) continue;
        sum += advantages[t];
        n++;
      }
      const len = rollout.lengths[r];
      return {
        text: ro.texts[r],
        length: len,
        finished: rollout.finished[r],
        reward: ro.rewards[r],
        passed: completionPasses(ro.verdicts[r].parts.accuracy, rollout.finished[r]),
        advantage: n ? sum / n : 0,
        masked: rowMasked(mask, r, S, len),
      };
    });
    out.push({ index: g, prompt: item.prompt, answer: item.answer, completions });
  }
  return out;
}
