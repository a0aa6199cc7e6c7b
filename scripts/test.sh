#!/usr/bin/env bash
# `npm test`: the whole suite on a fresh machine. Installs missing system packages (scripts/setup-system.sh),
# typechecks, runs the Node tier (Vitest: GPU kernels through Dawn on SwiftShader, twins, tasks, model; the second
# driver, lavapipe, is `npm run test:lavapipe`, not part of this), then the browser tier
# (Playwright in Debian's Chromium with WebGPU), and prints one closing line with the totals.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
mkdir -p test-results

bash scripts/setup-system.sh || exit 1

echo "== typecheck"
npx tsc --noEmit -p tsconfig.json || { echo "typecheck failed"; exit 1; }

echo "== unit (vitest, Node + Dawn)"
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json
unit=$?

echo "== e2e (playwright, Chromium + WebGPU)"
npx playwright test
e2e=$?

echo "== page bundle (the e2e build's entry chunk: no WGSL, no trainer code)"
node scripts/check-entry-chunk.mjs || e2e=1

node scripts/summarize-tests.mjs test-results/vitest.json test-results/e2e.json "$(( $(date +%s) - start ))"
summary=$?
[ $unit -eq 0 ] && [ $e2e -eq 0 ] && [ $summary -eq 0 ]
