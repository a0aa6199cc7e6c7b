// Reads the test tiers' reports (Vitest's and Playwright's JSON) and prints each tier's counts, time and slowest
// files (Vitest) or tests (Playwright), ending with one line "tests: N passed, M failed" that CI reads
// (", K tiers not run" added when the run stopped early).
// scripts/test.sh calls it with one argument per tier:
//   node scripts/summarize-tests.mjs [--time SECONDS] NAME=REPORT[@SECONDS] ... NAME=not-run ...
// (REPORT: a Vitest or Playwright JSON report; @SECONDS: the tier's wall time; not-run: an earlier step failed).
// Exits 1 when a tier did not run, a report is missing, a test failed, or nothing ran.
import { existsSync, readFileSync } from 'node:fs';

/** The arguments: the whole run's seconds and the tiers in order. */
function parseArgs(argv) {
  let seconds = null;
  const tiers = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--time') {
      seconds = argv[++i];
      continue;
    }
    const m = /^([\w-]+)=(.+?)(?:@(\d+))?$/.exec(argv[i]);
    if (!m) {
      console.error(`summarize-tests: expected NAME=REPORT[@SECONDS] or NAME=not-run, got ${argv[i]}`);
      process.exit(2);
    }
    tiers.push({ name: m[1], report: m[2], seconds: m[3] ?? null });
  }
  return { seconds, tiers };
}

/** How many of a tier's slowest files (Vitest) or tests (Playwright) the summary names, to show where its time goes. */
const SLOWEST = 5;

/** A report's [seconds, name] per Vitest file or Playwright test, slowest first. */
function slowest(report) {
  const root = `${process.cwd()}/`;
  if ('testResults' in report)
    return report.testResults
      .map((f) => [(f.endTime - f.startTime) / 1000, f.name.replace(root, '')])
      .sort((a, b) => b[0] - a[0]);
  const out = [];
  const walk = (suite) => {
    for (const spec of suite.specs ?? [])
      for (const t of spec.tests)
        out.push([t.results.reduce((sum, r) => sum + r.duration, 0) / 1000, `${spec.file} › ${spec.title}`]);
    for (const inner of suite.suites ?? []) walk(inner);
  };
  for (const suite of report.suites) walk(suite);
  return out.sort((a, b) => b[0] - a[0]);
}

/** A report's counts, from Vitest's JSON reporter or Playwright's. */
function counts(report) {
  if ('numPassedTests' in report)
    return {
      passed: report.numPassedTests,
      failed: report.numFailedTests,
      skipped: report.numPendingTests + report.numTodoTests,
    };
  const s = report.stats;
  return { passed: s.expected, failed: s.unexpected + (s.flaky ?? 0), skipped: s.skipped };
}

const { seconds, tiers } = parseArgs(process.argv.slice(2));
let passed = 0;
let failed = 0;
let skipped = 0;
let notRun = 0;
let ok = true;
for (const tier of tiers) {
  if (tier.report === 'not-run') {
    console.log(`${tier.name}: not run (an earlier step failed)`);
    notRun++;
    ok = false;
    continue;
  }
  if (!existsSync(tier.report)) {
    console.log(`${tier.name}: no report at ${tier.report} (the runner did not finish)`);
    ok = false;
    continue;
  }
  const report = JSON.parse(readFileSync(tier.report, 'utf8'));
  const c = counts(report);
  passed += c.passed;
  failed += c.failed;
  skipped += c.skipped;
  console.log(
    `${tier.name}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped${tier.seconds ? ` in ${tier.seconds} s` : ''}`,
  );
  for (const [s, name] of slowest(report).slice(0, SLOWEST)) console.log(`  ${s.toFixed(0).padStart(5)} s  ${name}`);
}
if (seconds) console.log(`time: ${seconds} s`);
const notRunText = notRun ? `, ${notRun} tier${notRun > 1 ? 's' : ''} not run` : '';
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}${notRunText}`);
process.exit(ok && failed === 0 && passed > 0 ? 0 : 1);
