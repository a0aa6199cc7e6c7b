// The lessons, in the order the panel lists them. A lesson is one file in catalog/; adding one is adding the file
// and its line here (src/lessons/lessons.test.ts fails when a catalog file is not listed). docs/lessons.md says how.

import { clipZero } from './catalog/clip-zero';
import { criticVsGroup } from './catalog/critic-vs-group';
import { deadGroups } from './catalog/dead-groups';
import { distillVsRl } from './catalog/distill-vs-rl';
import { entropyCollapse } from './catalog/entropy-collapse';
import { firstRun } from './catalog/first-run';
import { klEstimators } from './catalog/kl-estimators';
import { learnedReward } from './catalog/learned-reward';
import { lengthBias } from './catalog/length-bias';
import { rewardHacking } from './catalog/reward-hacking';
import { rlVsSft } from './catalog/rl-vs-sft';
import { samplerMismatch } from './catalog/sampler-mismatch';
import { staleRollouts } from './catalog/stale-rollouts';
import { weakVsStrongPrior } from './catalog/weak-vs-strong-prior';
import type { Lesson } from './lesson';

export const LESSONS: readonly Lesson[] = [
  firstRun,
  clipZero,
  deadGroups,
  entropyCollapse,
  lengthBias,
  klEstimators,
  samplerMismatch,
  staleRollouts,
  criticVsGroup,
  weakVsStrongPrior,
  rewardHacking,
  learnedReward,
  rlVsSft,
  distillVsRl,
];

/** The lesson whose run is the experiment the page opens on (store/slices/config.ts LAB_DEFAULT). */
export const FIRST_LESSON: Lesson = firstRun;

/** The lesson with `id`, or undefined. */
export function lessonById(id: string): Lesson | undefined {
  return LESSONS.find((l) => l.id === id);
}

export type { Lesson, LessonCheck, LessonQuestion, LessonRun, LessonRunResult, LessonVerdict } from './lesson';
export { LESSON_DEFAULT_SEED, lessonRunOverrides } from './lesson';
export { latestOf, renderNarration, narrationNumber, smoothedLatestOf, type LatestMetrics } from './narration';
