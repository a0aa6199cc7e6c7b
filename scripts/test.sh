#!/usr/bin/env bash
# `npm test`: the whole suite on a fresh machine, in tiers (docs/tests.md, "Tiers"), quickest first:
#   1. quick: typecheck, then the fast tier (Vitest `fast`: pure logic on the CPU, no Dawn, a thread per core).
#      A failure here stops the run: nothing slower starts.
#   2. system packages (scripts/setup-system.sh: Chromium, the Vulkan loader), then, side by side, the GPU tier
#      (Vitest's `slow` projects: GPU kernels through Dawn on SwiftShader, the model, the trainer, the CLIs, a sample
#      of the lessons' checks; the second driver, lavapipe, is `npm run test:lavapipe`, not part of this) and the
#      browser tier (Playwright in Debian's Chromium with WebGPU; the kernel self-test on its sample) with the page
#      bundle check. Both always run, so one run reports both.
# Each tier's report goes to test-results/; scripts/summarize-tests.mjs prints each tier's counts and time and ends
# with one closing line with the totals. The full versions of what the tiers sample: `npm run lessons -- --check`
# (every lesson, 5 seeds) and `RL_LAB_FULL_SELFTEST=1 npx playwright test e2e/selftest.spec.ts` (every kernel case).
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
mkdir -p test-results
# A report left from an earlier run would be read as this run's.
rm -f test-results/vitest-fast.json test-results/vitest-slow.json test-results/e2e.json

# name=report@seconds for each tier that ran, name=not-run for each that did not (scripts/summarize-tests.mjs).
tiers=()
tier_start=0
begin() {
  echo "== $1"
  tier_start=$(date +%s)
}
took() { echo $(($(date +%s) - tier_start)); }
summarize() {
  node scripts/summarize-tests.mjs --time "$(($(date +%s) - start))" "${tiers[@]}"
}

# 1. Quick tier: stop at the first failure.
begin 'quick tier: typecheck'
if ! npx tsc --noEmit -p tsconfig.json; then
  echo 'typecheck failed: the fast, GPU and browser tiers did not run'
  tiers+=(quick=not-run gpu=not-run browser=not-run)
  summarize
  exit 1
fi
typecheck_s=$(took)
begin 'quick tier: vitest --project fast* (pure logic, no Dawn)'
npx vitest run --project 'fast*' --maxWorkers=100% --reporter=default --reporter=json \
  --outputFile.json=test-results/vitest-fast.json
fast=$?
tiers+=("quick=test-results/vitest-fast.json@$(($(took) + typecheck_s))")
if [ $fast -ne 0 ]; then
  echo 'fast tier failed: the GPU and browser tiers did not run'
  tiers+=(gpu=not-run browser=not-run)
  summarize
  exit 1
fi

# 2. GPU tier.
bash scripts/setup-system.sh || {
  tiers+=(gpu=not-run browser=not-run)
  summarize
  exit 1
}
# The GPU tier and the browser tier run side by side: each keeps about one core busy (a Vitest fork drives Dawn's
# SwiftShader from one thread most of the time; Chromium's GPU process likewise), so together they fill the machine's
# two (docs/tests.md, "Tiers"). Each writes its log to test-results/ and the log is printed when both are done.
# RL_LAB_TIERS_IN_SEQUENCE=1 runs them one after the other, printing as they go; RL_LAB_GPU_WORKERS sets the GPU
# tier's forks (1 by default).
gpu_tier() {
  npx vitest run --project 'slow*' --maxWorkers="${RL_LAB_GPU_WORKERS:-1}" --reporter=default --reporter=json \
    --outputFile.json=test-results/vitest-slow.json
}
browser_tier() {
  local rc=0
  npx playwright test || rc=1
  echo '== page bundle (the e2e build'"'"'s entry chunk: no WGSL, no trainer code)'
  node scripts/check-entry-chunk.mjs || rc=1
  return $rc
}
begin 'GPU tier: vitest --project slow* (Dawn on SwiftShader, CLIs, training runs) and browser tier: playwright (Chromium + WebGPU)'
if [ "${RL_LAB_TIERS_IN_SEQUENCE:-0}" = 1 ]; then
  gpu_tier
  slow=$?
  tiers+=("gpu=test-results/vitest-slow.json@$(took)")
  begin 'browser tier: playwright (Chromium + WebGPU)'
  browser_tier
  browser=$?
  tiers+=("browser=test-results/e2e.json@$(took)")
else
  gpu_start=$(date +%s)
  gpu_tier > test-results/gpu-tier.log 2>&1 &
  gpu_pid=$!
  browser_tier > test-results/browser-tier.log 2>&1
  browser=$?
  browser_s=$(($(date +%s) - gpu_start))
  wait $gpu_pid
  slow=$?
  gpu_s=$(($(date +%s) - gpu_start))
  echo '== GPU tier'
  cat test-results/gpu-tier.log
  echo '== browser tier'
  cat test-results/browser-tier.log
  tiers+=("gpu=test-results/vitest-slow.json@$gpu_s" "browser=test-results/e2e.json@$browser_s")
fi

summarize
summary=$?
[ $slow -eq 0 ] && [ $browser -eq 0 ] && [ $summary -eq 0 ]
