// What the page and the engine worker say about hub models: the check made from a model's small files before any
// weight is fetched (architecture, memory plan, download size), a download's progress per file, and the models the
// browser keeps. Plain data, shared by the worker protocol (src/worker/protocol.ts), the worker's download manager
// and the store; no code.

/** One file of a hub model as a check or a download sees it. */
export interface HubFileState {
  name: string;
  /** Bytes of the whole file (from the hub's HEAD), or null when the hub gave no size. */
  size: number | null;
  /** Bytes the browser already keeps of it (a complete file, or what a cut download left). */
  kept: number;
}

/** What the small files of a hub model say, before any weight is fetched. */
export interface HubCheck {
  /** The model as the person typed it (`org/name` or `org/name@revision`). */
  model: string;
  /** `org/name`. */
  repoId: string;
  revision: string;
  /** The commit the revision resolved to, or null when the hub sent none. */
  commit: string | null;
  /** The endpoint's origin (`https://huggingface.co`, or the hub the person set). */
  origin: string;
  /** The architecture in words (class, layers, widths, vocabulary, parameters), from config.json. */
  architecture: string;
  /** Why the engine cannot run it (named from config.json alone), or null when it can. */
  refused: string | null;
  /** Every file the run needs, small files and weights. */
  files: HubFileState[];
  /** Bytes still to fetch (sizes minus what is kept; unknown sizes count 0 and `sizesKnown` is false). */
  downloadBytes: number;
  sizesKnown: boolean;
  /** The memory plan of the draft config on this model, in words, with its total; null when refused. */
  memory: { totalBytes: number; budgetBytes: number | null; fits: boolean; lines: string[] } | null;
  /** Seconds of one step of the draft config on this adapter (src/schema/step-estimate.ts), and where the adapter's speed figures come from; null when refused or the adapter has no WebGPU device. */
  estimate: { seconds: number; source: string } | null;
  /** generation_config.json's sampling defaults, where it has them. */
  generation: { temperature?: number; top_p?: number; top_k?: number; do_sample?: boolean } | null;
  /** True when tokenizer_config.json carries a chat template. */
  chatTemplate: boolean;
}

/**
 * Where one model's download stands. 'stalled': no data for a while (the transfer is cut at the idle timeout);
 * 'retrying': waiting to resume after a cut (HubProgress.retry says which resume of how many).
 */
export type HubDownloadState =
  | 'checking'
  | 'downloading'
  | 'stalled'
  | 'retrying'
  | 'verifying'
  | 'done'
  | 'paused'
  | 'failed';

/** A download's progress (WorkerEvent 'hub-progress'), sent a few times a second while it runs. */
export interface HubProgress {
  model: string;
  state: HubDownloadState;
  /** Per file; the one being fetched is `current`. */
  files: HubFileState[];
  current: string | null;
  /** Bytes kept of all files, and their total (null when a size is unknown). */
  bytes: number;
  total: number | null;
  /** Bytes per second over the last few seconds; 0 before any. */
  rate: number;
  /** Seconds left at that rate, or null. */
  etaSeconds: number | null;
  /** Why it failed, paused, stalled or is retrying, in the person's words (a 401 says what to do; offline names the host). */
  message: string | null;
  /** While 'retrying': this resume's number and how many there may be ("retrying 2 of 3"). */
  retry?: { retry: number; retries: number };
}

/** A model the browser keeps (complete, or a download to resume). */
export interface KeptModel {
  /** The model as typed when it was fetched (`org/name@revision`). */
  model: string;
  repoId: string;
  revision: string;
  commit: string | null;
  origin: string;
  /** Bytes kept, and the whole when known. */
  bytes: number;
  total: number | null;
  complete: boolean;
}
