// Exports of an experiment to other trainers (TRL, verl, OpenRLHF), one import for the CLI and the store: the
// mapping of every config field (mapping.ts), the rendered files (render.ts), the prompts (data.ts) and the
// quoting of every value they write (quote.ts).

export {
  EXPORT_TARGETS,
  TARGET_LABELS,
  estimatorRefusal,
  mappingRows,
  trlClassOf,
  type ExportTarget,
  type MappingRow,
  type Setting,
} from './mapping';
export { ExportValueError } from '../core/quote';
export {
  CONFIG_FILE,
  DEFAULT_MODEL_PATH,
  VALUE_FILES,
  TARGET_VERSIONS,
  bundleName,
  bundleScript,
  exportExperiment,
  mappingTable,
  verlPromptLengthOf,
  type Export,
  type ExportFile,
  type ExportOptions,
  type PromptLength,
} from './render';
