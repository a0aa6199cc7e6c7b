// The shipped reward classifier (public/models/sentiment-char, made by scripts/make-reward-classifier.py) through
// transformers.js in Node: its logits equal PyTorch's, rewards are the chosen label's probability or logit, and bad
// folders are refused with the file and the rule.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CLASSIFIER_FILES,
  classifierLabels,
  loadRewardClassifier,
  RewardClassifierError,
  softmaxRow,
} from './reward-classifier';
import fixture from '../io/fixtures/sentiment-char.json';

const DIR = new URL('../../public/models/sentiment-char/', import.meta.url);
const shipped = (): Map<string, Uint8Array> =>
  new Map(CLASSIFIER_FILES.map((f) => [f, new Uint8Array(readFileSync(new URL(f, DIR)))]));

describe('reward classifier through transformers.js', () => {
  it('gives PyTorch logits for the positive label, in one batched call', async () => {
    const rc = await loadRewardClassifier(shipped(), { label: 'POSITIVE', output: 'logit' });
    try {
      expect(rc.labels).toEqual(['NEGATIVE', 'POSITIVE']);
      const got = await rc.score(fixture.texts);
      expect(got.length).toBe(fixture.texts.length);
      fixture.logits.forEach((row, i) => expect(got[i]).toBeCloseTo(row[1], 4));
    } finally {
      await rc.dispose();
    }
  });

  it('gives the label probability by default, equal to the softmax of the logits', async () => {
    const rc = await loadRewardClassifier(shipped(), { label: 'NEGATIVE' });
    try {
      const got = await rc.score(fixture.texts);
      fixture.logits.forEach((row, i) => expect(got[i]).toBeCloseTo(softmaxRow(row)[0], 5));
      expect(got[0]).toBeLessThan(0.05); // "a good day"
      expect(got[1]).toBeGreaterThan(0.95); // "the worst film"
      expect(await rc.score([])).toEqual(new Float64Array(0));
      const [empty] = await rc.score(['']);
      expect(Number.isFinite(empty)).toBe(true);
    } finally {
      await rc.dispose();
    }
  });

  it('refuses an unknown label, naming the labels', async () => {
    await expect(loadRewardClassifier(shipped(), { label: 'HAPPY' })).rejects.toThrow(
      /"HAPPY" is not one of the model's labels \(NEGATIVE, POSITIVE\)/,
    );
  });

  it('refuses a folder without the ONNX file, naming it', async () => {
    const files = shipped();
    files.delete('onnx/model.onnx');
    await expect(loadRewardClassifier(files, { label: 'POSITIVE' })).rejects.toThrow(/lacks onnx\/model\.onnx/);
  });

  it('reads id2label and names what is wrong with it', () => {
    expect(classifierLabels('{"id2label":{"1":"B","0":"A"}}').labels).toEqual(['A', 'B']);
    expect(() => classifierLabels('{')).toThrow(RewardClassifierError);
    expect(() => classifierLabels('{"model_type":"bert"}')).toThrow(/no id2label/);
    expect(() => classifierLabels('{"id2label":{"0":"A"}}')).toThrow(/at least 2/);
    expect(() => classifierLabels('{"id2label":{"0":"A","5":"B"}}')).toThrow(/entry "5"/);
  });
});
