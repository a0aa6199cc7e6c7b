// What the page's panels need from the layers below the store, in one place: the config's fields, sections and
// presets, the tasks, and the metric catalog's charts. The UI imports these from here (ui -> store -> the rest),
// never from src/rl, src/tasks, src/schema or the engine directly. Re-exports only.

export {
  FIELD_SECTIONS,
  PRESET_INFO,
  PRESET_NAMES,
  RL_FIELDS,
  SECTIONS,
  configToUrlParams,
  decodeFieldText,
  encodeFieldText,
  derive,
  isPresetName,
  rangeText,
  sameValue,
  resolveConfig,
  taskFactoryOf,
  type DerivedConfig,
  type FieldSpec,
  type PresetName,
  type RLConfig,
  type RLField,
} from '../schema/config';
export {
  REAL_MODEL_CHOICES,
  REAL_MODEL_TASKS,
  describeSamplingResolution,
  realModelExperiment,
  resolveSamplingDefaults,
  type RealModelTask,
} from '../schema/config';
export { ESTIMATE_ACCURACY, describeSeconds, describeSecondsRange } from '../schema/step-estimate';
export { PROMPT_LIST_TASK, taskChoices, taskFactories, taskNames, type TaskFactory, type TaskName } from '../tasks';
export { CHARTS, METRICS, metricSpec, type ChartFamily, type ChartId, type MetricSpec } from '../schema/metrics';
export { HISTOGRAMS, HISTOGRAM_IDS, type HistogramId } from '../schema/histograms';
export type { ExportKind } from '../engine/lab-engine';
export { MAX_RUN_NAME, TRAINER_TITLES } from '../schema/run-types';
export type { BackendKind, RunHeader, RunProgress } from '../schema/run-types';
export type { EvalRecord, GroupRecord, GroupSummary } from '../schema/stream';
export { splitDocRefs, type DocTextPart } from '../schema/doc-links';
