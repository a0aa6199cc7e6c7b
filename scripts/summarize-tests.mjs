// Reads Vitest's and Playwright's JSON reports and prints the totals, ending with one line
// "tests: N passed, M failed" that CI reads. Exits 1 when a report is missing, a test failed, or nothing ran.
import { existsSync, readFileSync } from 'node:fs';

const [vitestPath, playwrightPath, seconds] = process.argv.slice(2);

function read(path, what) {
  if (!existsSync(path)) {
    console.error(`${what}: no report at ${path} (the runner did not finish)`);
    return null;
  }
  return JSON.parse(readFileSync(path, 'utf8'));
}

let passed = 0;
let failed = 0;
let skipped = 0;
let ok = true;

const v = read(vitestPath, 'unit');
if (v) {
  passed += v.numPassedTests;
  failed += v.numFailedTests;
  skipped += v.numPendingTests + v.numTodoTests;
  console.log(
    `unit: ${v.numPassedTests} passed, ${v.numFailedTests} failed, ${v.numPendingTests + v.numTodoTests} skipped`,
  );
} else ok = false;

const p = read(playwrightPath, 'e2e');
if (p) {
  const s = p.stats;
  const pf = s.unexpected + (s.flaky ?? 0);
  passed += s.expected;
  failed += pf;
  skipped += s.skipped;
  console.log(`e2e: ${s.expected} passed, ${pf} failed, ${s.skipped} skipped`);
} else ok = false;

if (seconds) console.log(`time: ${seconds} s`);
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(ok && failed === 0 && passed > 0 ? 0 : 1);
