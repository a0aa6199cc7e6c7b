// The shipped warm-start checkpoints: each one in the manifest loads, validates against its config.json, uses the
// lab's character tokenizer, and records the task, seed and steps the manifest states; docs/models.md's table agrees.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../cli/files';
import { buildCharTokenizerJson } from '../io/tokenizer';
import { MODEL_PRESETS } from '../schema/model-config';
import { getTask } from '../tasks';

const root = new URL('../../public/checkpoints/', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('manifest.json', root), 'utf8')) as {
  checkpoints: {
    task: string;
    difficulty: number;
    path: string;
    steps: number;
    seed: number;
    heldout_greedy_accuracy: number;
    command: string;
  }[];
};

describe('shipped warm starts', () => {
  it('cover at least five tasks, each with a held-out accuracy that leaves RL room (10% to 70%)', () => {
    expect(manifest.checkpoints.length).toBeGreaterThanOrEqual(5);
    for (const e of manifest.checkpoints) {
      expect(e.heldout_greedy_accuracy, e.task).toBeGreaterThanOrEqual(0.1);
      expect(e.heldout_greedy_accuracy, e.task).toBeLessThanOrEqual(0.7);
      expect(e.command).toMatch(new RegExp(`--sft --task ${e.task} `));
    }
  });

  it("docs/models.md's warm-start table states what the manifest records", () => {
    const models = readFileSync(new URL('../../docs/models.md', import.meta.url), 'utf8');
    const rows = [...models.matchAll(/^\| (\w+) \| (\d+) \| (\d+) \| ([\d.]+)% /gm)].map((m) => [
      m[1],
      Number(m[2]),
      Number(m[3]),
      Number(m[4]),
    ]);
    const want = manifest.checkpoints.map((e) => [
      e.task,
      e.difficulty,
      e.steps,
      Number((e.heldout_greedy_accuracy * 100).toFixed(1)),
    ]);
    expect(rows).toEqual(want);
  });

  for (const e of manifest.checkpoints) {
    it(`${e.task}: loads, is the nano preset, and records how it was made`, async () => {
      const { ck, tok } = await loadCheckpointDir(new URL(e.task, root).pathname);
      expect(ck.config).toEqual(MODEL_PRESETS.nano);
      expect(ck.metadata.task).toBe(e.task);
      expect(Number(ck.metadata.steps)).toBe(e.steps);
      expect(Number(ck.metadata.seed)).toBe(e.seed);
      const shipped = JSON.parse(readFileSync(new URL(`${e.task}/tokenizer.json`, root), 'utf8'));
      expect(shipped).toEqual(JSON.parse(JSON.stringify(buildCharTokenizerJson())));
      expect(tok.vocabSize).toBe(ck.config.vocabSize);
      expect(() => getTask(e.task)).not.toThrow();
    });
  }
});
