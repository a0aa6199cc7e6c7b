// The RL training config, one import for its users: the schema (schema.ts, over src/schema/), the named presets
// (presets.ts), validation at the boundaries (validate.ts), derived quantities (derive.ts), and the JSON and URL
// codecs (codecs.ts, messages.ts). The knobs, their rules and the settings that are not knobs are declared once, in
// schema.ts and src/schema/objective.ts.

export {
  DEFAULT_CONFIG,
  FIELD_NAMES,
  FIELD_SECTIONS,
  FIELD_SPECS,
  RL_FIELDS,
  RL_RULES,
  SETTINGS,
  sameConfig,
  type RLConfig,
  type RLField,
  type SettingName,
} from './schema';
export { PRESETS, PRESET_INFO, PRESET_NAMES, isPresetName, type PresetName } from './presets';
export {
  RLConfigError,
  checkConfig,
  configWarnings,
  problemsOf,
  resolveConfig,
  validateConfig,
  type ConfigCheck,
} from './validate';
export { derive, isGroupEstimator, type DerivedConfig } from './derive';
export {
  REAL_MODEL_CHOICES,
  REAL_MODEL_TASKS,
  realModelExperiment,
  type RealModelChoice,
  type RealModelTask,
} from './real-model-experiment';
export {
  describeSamplingResolution,
  resolveSamplingDefaults,
  type SamplingResolution,
} from './sampling-defaults';
export { taskFactoryOf, taskOf, type TaskFields } from './task-of';
export {
  configFromUrlParams,
  configFromUrlParamsKeeping,
  configToJson,
  configToUrlParams,
  parseConfigJson,
  type LinkConfig,
} from './codecs';
export { locateJsonError, summarizeProblems } from './messages';
export {
  SECTIONS,
  decodeFieldText,
  editDistance,
  encodeFieldText,
  kindText,
  nearestField,
  rangeText,
  sameValue,
  suggestion,
  unknownFieldMessage,
  type FieldSpec,
  type Section,
} from '../fields';
export {
  KL_ESTIMATORS,
  LOSS_AGG_MODES,
  LOSS_TYPES,
  epsilonHigh,
  type KlEstimator,
  type LossAggMode,
  type LossType,
  type ObjectiveConfig,
} from '../objective';
