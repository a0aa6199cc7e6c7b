// The lab's zustand store, composed from typed slices (one file each under slices/): config, engine, runs,
// charts, inspector, notices, alerts, lessons, compare, seeds, folders, reward_fn, estimates. createLabStore() makes a store with its own engine link, storage and
// counters (tests make fresh ones with a fake engine and a map for storage); useLab is the page's. Actions are callable outside React (the worker client
// feeds messages in through handleResponse). The rules of the run controls are selectors.ts.

import { create } from 'zustand';
import { connectEngine } from '../worker/client';
import { engineLink, type EngineConnector } from './engine-link';
import type { KeyValueStorage, SliceDeps } from './slice';
import { alertsSlice, type AlertsSlice } from './slices/alerts';
import { chartsSlice, type ChartsSlice } from './slices/charts';
import { compareSlice, type CompareSlice } from './slices/compare';
import { foldersSlice, type FoldersSlice } from './slices/folders';
import { hubSlice, type HubSlice } from './slices/hub';
import { configSlice, type ConfigSlice } from './slices/config';
import { engineSlice, type EngineSlice } from './slices/engine';
import { inspectorSlice, type InspectorSlice } from './slices/inspector';
import { lessonsSlice, type LessonsSlice } from './slices/lessons';
import { noticesSlice, type NoticesSlice } from './slices/notices';
import { runsSlice, type RunsSlice } from './slices/runs';
import { rewardFnSlice, type RewardFnSlice } from './slices/reward-fn';
import { verlPromptLengthSlice, type VerlPromptLengthSlice } from './slices/verl-prompt-length';
import { estimatesSlice, type EstimatesSlice } from './slices/estimates';
import { seedsSlice, type SeedsSlice } from './slices/seeds';

// Adding a slice: write slices/<name>.ts (its state, actions and a LabSlice), then name it in LabState and spread
// it in createLabStore (the compiler refuses a slice named in LabState but not spread).
export type LabState = ConfigSlice &
  EngineSlice &
  RunsSlice &
  ChartsSlice &
  InspectorSlice &
  NoticesSlice &
  AlertsSlice &
  LessonsSlice &
  CompareSlice &
  SeedsSlice &
  FoldersSlice &
  RewardFnSlice &
  VerlPromptLengthSlice &
  EstimatesSlice &
  HubSlice;

export interface LabStoreOptions {
  /** How the store reaches its engine (default: the engine worker). */
  connect?: EngineConnector;
  /** Where lesson progress is kept (default: the browser's localStorage, when the page may use it). */
  storage?: KeyValueStorage | null;
}

/** The browser's localStorage, or null where there is none or the page may not use it. */
function browserStorage(): KeyValueStorage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

/** The page's engine: the worker, started on the first startEngine(). */
const connectWorker: EngineConnector = connectEngine;

/** A lab store with its own engine link and counters. */
export function createLabStore(options: LabStoreOptions = {}) {
  const deps: SliceDeps = {
    link: engineLink(options.connect ?? connectWorker),
    storage: options.storage === undefined ? browserStorage() : options.storage,
  };
  return create<LabState>()((...a) => ({
    ...configSlice(deps)(...a),
    ...engineSlice(deps)(...a),
    ...runsSlice(deps)(...a),
    ...chartsSlice(deps)(...a),
    ...inspectorSlice(deps)(...a),
    ...noticesSlice(deps)(...a),
    ...alertsSlice(deps)(...a),
    ...lessonsSlice(deps)(...a),
    ...compareSlice(deps)(...a),
    ...seedsSlice(deps)(...a),
    ...foldersSlice(deps)(...a),
    ...rewardFnSlice(deps)(...a),
    ...verlPromptLengthSlice(deps)(...a),
    ...estimatesSlice(deps)(...a),
    ...hubSlice(deps)(...a),
  }));
}

export type LabStore = ReturnType<typeof createLabStore>;

/** The page's store. */
export const useLab: LabStore = createLabStore();

export type { EngineConnection, EngineConnector } from './engine-link';
export { alertsOn, type AlertsSlice } from './slices/alerts';
export type { ChartsSlice, RunView } from './slices/charts';
export { isEstimate, type EstimateTopic, type EstimateView, type EstimatesSlice } from './slices/estimates';
export { checkpointDir, hubModelOf } from '../schema/checkpoint-path';
export { DEFAULT_HF_ENDPOINT, endpointProblem, type HubSlice, type HubCheckState } from './slices/hub';
export { splitPickedPaths, type FolderField, type FolderImport, type PickedFile } from './slices/folders';
export {
  COMPARE_FIELDS,
  compareBlocker,
  compareDependency,
  compareDependencyOf,
  compareEdits,
  currentRunConfig,
  type CompareSlice,
  type ComparisonView,
} from './slices/compare';
export { LAB_DEFAULT, PAGE_PARAMS, type ConfigSlice, type WarmStart } from './slices/config';
export { IDLE_PROGRESS, type EngineSlice } from './slices/engine';
export { rolloutKey, type InspectorSlice } from './slices/inspector';
export type { Notice, NoticesSlice } from './slices/notices';
export type { RunsSlice } from './slices/runs';
export type { SeedsSlice } from './slices/seeds';
export { BAND_LEVEL, BOOTSTRAP_RESAMPLES, type SeedStatistic } from './seed-bands';
export { SEED_GROUP_MAX, SEED_GROUP_MIN } from '../schema/seed-group';
export {
  LESSON_PROGRESS_KEY,
  NO_PROGRESS,
  type LessonPhase,
  type LessonProgress,
  type LessonSession,
  type LessonsSlice,
} from './slices/lessons';
export { LESSONS, LESSON_DEFAULT_SEED, lessonById, narrationNumber, type Lesson, type LessonVerdict } from '../lessons';
export type { Export, ExportFile, ExportTarget, MappingRow, Setting } from '../export';
