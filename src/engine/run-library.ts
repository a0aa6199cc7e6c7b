// The runs library: the stored runs of a RunStore (list, load, rename, delete, export, import), apart from training
// them. The page's engine (lab-engine.ts) offers it as `engine.runs`, telling it which run it has in memory (its live
// header and session are newer than the store's); any other driver with a RunStore (a test, a command) uses it as it
// is. Runs left training when the page went away are marked interrupted here (recover).

import { tokenizerFromFiles } from '../io/hf-folder';
import type { Tokenizer } from '../io/tokenizer';
import { metricsToCsv, metricsToJsonl, rolloutsToJsonl } from '../io/run-files';
import { chartedRows, parseRunOrTrainerLog } from '../io/foreign-logs';
import { exportPolicyFolder, policyFiles, type PolicyFiles, type RunSession, type SavedRun } from './run-session';
import type { RunRecords, RunStore } from './run-store';
import {
  CHAR_TOKENIZER_PATH,
  readSourceGenerationConfig,
  readSourceModelConfig,
  type AssetLoader,
} from './start-policy';
import { defaultRunName, runNameProblem, type RolloutRecord, type RunHeader } from '../schema/run-types';

/** What a run is exported as. */
export type ExportKind = 'metrics-csv' | 'metrics-jsonl' | 'rollouts-jsonl' | 'checkpoint';

/** One file a run is downloaded as: a name to save it under, its MIME type and its content. */
export interface DownloadFile {
  name: string;
  mime: string;
  data: string | Uint8Array;
}

/** A run id that sorts by creation time. */
export function newRunId(now: number): string {
  return `run-${now.toString(36)}-${Math.floor(Math.random() * 36 ** 4)
    .toString(36)
    .padStart(4, '0')}`;
}

/** A file-name-safe form of a run name. */
export function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'run'
  );
}

/** The run a driver has in memory: its live header, its session (null when it has none), and whether a step is in flight. */
export interface LiveRun {
  header: RunHeader;
  session: RunSession | null;
  training: boolean;
}

export interface RunLibraryDeps {
  store: RunStore;
  assets: AssetLoader;
  /** Wall clock for imported runs' ids and times. */
  wallClock: () => number;
  /** Called after the list of runs changed (a rename, a delete, an import); `live`: the live run's header changed. */
  onChange: (live: boolean) => void;
  /** The run the driver has in memory (default: none); its state is newer than the store's. */
  live?: () => LiveRun | null;
  /** Lets go of the live run before it is deleted (throws when it cannot now: a step is in flight). */
  releaseLive?: () => void;
}

export class RunLibrary {
  private readonly tokenizers = new Map<string, Tokenizer>();

  constructor(private readonly deps: RunLibraryDeps) {}

  /** Marks runs that were training when the page went away as interrupted (they resume from their saved state). */
  async recover(): Promise<void> {
    const runs = await this.deps.store.listRuns();
    for (const h of runs) {
      if (h.status === 'running' || h.status === 'pausing' || h.status === 'loading') {
        const fixed: RunHeader = {
          ...h,
          status: 'interrupted',
          message:
            h.savedStep > 0
              ? `the page closed while it trained; resume continues from the saved state at step ${h.savedStep}`
              : 'the page closed before any state was saved',
        };
        await this.deps.store.putHeader(fixed).catch(() => undefined);
      }
    }
  }

  private live(): LiveRun | null {
    return this.deps.live?.() ?? null;
  }

  /** Every saved run, newest first, the live run with its live status. */
  async list(): Promise<RunHeader[]> {
    const runs = await this.deps.store.listRuns();
    const live = this.live()?.header;
    return runs.map((h) => (live && h.id === live.id ? { ...live } : h));
  }

  /**
   * A saved run's metric rows, evaluations and the steps that have sampled groups. A run imported from another
   * trainer's log gives the charts' names only (foreign-logs.ts chartedRows): the catalog's, its charted
   * uncatalogued ones and `picked`.
   */
  async load(runId: string, picked: readonly string[] = []): Promise<RunRecords> {
    const records = await this.deps.store.readRecords(runId);
    const origin = (await this.deps.store.getRun(runId))?.origin;
    return origin ? { ...records, rows: chartedRows(records.rows, origin, picked) } : records;
  }

  /** A saved run's header; throws when there is none. */
  async header(runId: string): Promise<RunHeader> {
    const h = await this.deps.store.getRun(runId);
    if (!h) throw new Error(`no saved run ${runId}`);
    return h;
  }

  /** A saved run's resume point (its trainer state and policy, with its tokenizer files), or null. */
  async resumePoint(runId: string): Promise<SavedRun | null> {
    const s = await this.deps.store.getState(runId);
    return s && { ...s, tokenizerConfigJson: s.tokenizerConfigJson ?? null };
  }

  /** The sampled groups of one step of a saved run. */
  async loadRollouts(runId: string, step: number): Promise<RolloutRecord> {
    const g = await this.deps.store.readRollouts(runId, step);
    if (!g) throw new Error(`no sampled groups are saved for step ${step}`);
    return g;
  }

  /**
   * Gives a saved run the name `name` (an empty name gives it back its default name). The live run's header is
   * renamed in place (it is the one the driver keeps saving).
   */
  async rename(runId: string, name: string): Promise<RunHeader> {
    const live = this.live()?.header;
    const isLive = live?.id === runId;
    const h = isLive ? live : await this.deps.store.getRun(runId);
    if (!h) throw new Error(`no saved run ${runId}`);
    const text = name.trim() || defaultRunName(h.config, h.preset);
    const problem = runNameProblem(text);
    if (problem) throw new Error(problem);
    h.name = text;
    await this.deps.store.putHeader(isLive ? { ...h } : h);
    this.deps.onChange(isLive);
    return { ...h };
  }

  /** Deletes a saved run (the live run is released first). */
  async delete(runId: string): Promise<void> {
    if (this.live()?.header.id === runId) this.deps.releaseLive?.();
    await this.deps.store.deleteRun(runId);
    this.tokenizers.delete(runId);
    this.deps.onChange(false);
  }

  /** The tokenizer of a run (the live session's, the one saved with its state, else the character tokenizer). */
  async tokenizerFor(runId: string): Promise<Tokenizer> {
    const cached = this.tokenizers.get(runId);
    if (cached) return cached;
    const live = this.live();
    const session = live?.header.id === runId ? live.session : null;
    let json = session?.tokenizerJson ?? '';
    let configJson = session?.tokenizerConfigJson ?? null;
    if (!json) {
      const saved = await this.deps.store.getState(runId).catch(() => null);
      json = saved?.tokenizerJson ?? '';
      configJson = saved?.tokenizerConfigJson ?? null;
    }
    if (!json) json = await this.deps.assets.text(CHAR_TOKENIZER_PATH);
    const tok = await tokenizerFromFiles(json, configJson);
    if (this.tokenizers.size > 32) this.tokenizers.clear();
    this.tokenizers.set(runId, tok);
    return tok;
  }

  /**
   * The files of an export of a saved run. A checkpoint comes from the live run's session between its steps, else
   * from the saved resume point.
   */
  async export(runId: string, kind: ExportKind): Promise<DownloadFile[]> {
    const live = this.live();
    const isLive = live?.header.id === runId;
    const h = isLive ? { ...live.header } : await this.deps.store.getRun(runId);
    if (!h) throw new Error(`no saved run ${runId}`);
    const base = slug(h.name);
    switch (kind) {
      case 'metrics-csv': {
        const r = await this.deps.store.readRecords(runId);
        return [{ name: `${base}.metrics.csv`, mime: 'text/csv', data: metricsToCsv(h, r.rows, r.evals) }];
      }
      case 'metrics-jsonl': {
        const r = await this.deps.store.readRecords(runId);
        return [
          { name: `${base}.metrics.jsonl`, mime: 'application/x-ndjson', data: metricsToJsonl(h, r.rows, r.evals) },
        ];
      }
      case 'rollouts-jsonl': {
        const rollouts = await this.deps.store.readAllRollouts(runId);
        return [{ name: `${base}.rollouts.jsonl`, mime: 'application/x-ndjson', data: rolloutsToJsonl(h, rollouts) }];
      }
      case 'checkpoint': {
        // The live session's policy when the run is between steps, else the saved resume point; a LoRA run's adapters
        // come from its trainer state (the checkpoint holds the merged weights).
        const session = isLive && !live.training ? live.session : null;
        let policy: PolicyFiles;
        if (session) policy = await session.exportFiles();
        else {
          const s = await this.deps.store.getState(runId);
          if (!s)
            throw new Error(
              h.mode === 'sft'
                ? `"${h.name}" is a supervised run, which keeps no saved checkpoint: download it while it is the open run`
                : `"${h.name}" has no saved checkpoint yet (pause it to save one)`,
            );
          policy = policyFiles(
            { ...s, tokenizerConfigJson: s.tokenizerConfigJson ?? null },
            h.config.lora_rank > 0 ? s.state : null,
          );
        }
        // The folders transformers and PEFT load: <run>-step<N>/ (and <run>-step<N>-adapter/), paths under the
        // folder the page zips or writes into (ui/Downloads.tsx).
        const out = exportPolicyFolder(
          h.name,
          policy,
          await readSourceGenerationConfig(h.config.checkpoint, this.deps.assets),
          h.config.checkpoint,
          await readSourceModelConfig(h.config.checkpoint, this.deps.assets),
        );
        return out.files.map((f) => ({
          name: f.path,
          mime: f.path.endsWith('.json') ? 'application/json' : 'application/octet-stream',
          data: f.data,
        }));
      }
    }
  }

  /**
   * Imports an exported run file, or a TRL, verl or OpenRLHF metrics log, as a new saved run; returns its header.
   * Throws RunFileError for a file that is none of them.
   */
  async import(fileName: string, text: string): Promise<RunHeader> {
    const data = parseRunOrTrainerLog(fileName, text);
    const t = this.deps.wallClock();
    data.header = {
      ...data.header,
      id: newRunId(t),
      name: `${data.header.name} (imported)`,
      status: 'imported',
      updatedAt: t,
      savedStep: 0,
    };
    await this.deps.store.putRun(data);
    this.deps.onChange(false);
    return data.header;
  }
}
