// The exports to TRL, verl and OpenRLHF as the page's "Run elsewhere" panel uses them: re-exported here because
// the UI imports values only from the store. Its own module, not the store's index, so the generators load with
// the lazily loaded panel and stay off the page's startup path (the index re-exports the types only).

export {
  DEFAULT_MODEL_PATH,
  EXPORT_TARGETS,
  TARGET_LABELS,
  TARGET_VERSIONS,
  bundleName,
  bundleScript,
  exportExperiment,
} from '../export';
export { verlPromptLengthKey } from './slices/verl-prompt-length';
