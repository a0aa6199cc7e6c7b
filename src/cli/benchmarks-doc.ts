// The benchmark documents on disk: the bench's report goes into its device's detail file (docs/benchmarks/<device>.md)
// and BENCHMARKS.md's summary is regenerated from every detail file (`npm run bench`, `npm run docs:benchmarks`).
// The Markdown itself is src/schema/bench-report.ts's and src/schema/bench-summary.ts's; this module only reads and writes files.

import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchReport } from '../schema/bench-report';
import { updateDeviceBenchmarksMarkdown } from '../schema/bench-report';
import {
  BENCHMARKS_DIR,
  BENCHMARKS_SUMMARY_PATH,
  benchmarksSummary,
  deviceFileName,
  withBenchmarksSummary,
} from '../schema/bench-summary';

const read = (path: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

/** Every detail file under `root`/docs/benchmarks, by file name. */
export function benchmarkDetailFiles(root: string): { name: string; text: string }[] {
  const dir = join(root, BENCHMARKS_DIR);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .map((name) => ({ name, text: readFileSync(join(dir, name), 'utf8') }));
}

/** BENCHMARKS.md as it should read: its hand-written text with the summary generated from the detail files. */
export function currentBenchmarksSummary(root: string): string {
  return withBenchmarksSummary(
    read(join(root, BENCHMARKS_SUMMARY_PATH)),
    benchmarksSummary(benchmarkDetailFiles(root)),
  );
}

/** Rewrites BENCHMARKS.md's generated summary from the detail files; returns its path. */
export function writeBenchmarksSummary(root: string): string {
  const path = join(root, BENCHMARKS_SUMMARY_PATH);
  writeFileSync(path, currentBenchmarksSummary(root));
  return path;
}

/** Puts the report's section into its device's detail file, then regenerates the summary; returns both paths. */
export function recordBenchReport(root: string, report: BenchReport): string[] {
  mkdirSync(join(root, BENCHMARKS_DIR), { recursive: true });
  const detail = join(root, BENCHMARKS_DIR, `${deviceFileName(report.adapter)}.md`);
  writeFileSync(detail, updateDeviceBenchmarksMarkdown(read(detail), report));
  return [detail, writeBenchmarksSummary(root)];
}
