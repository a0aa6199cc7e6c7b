// `npm run docs:benchmarks`: regenerates BENCHMARKS.md's summary from the per-device detail files of docs/benchmarks/
// (the bench does the same after recording a run). src/docs.test.ts fails while the summary is out of date.
import { fileURLToPath } from 'node:url';
import { writeBenchmarksSummary } from '../src/cli/benchmarks-doc';

console.log(`wrote ${writeBenchmarksSummary(fileURLToPath(new URL('..', import.meta.url)))}`);
