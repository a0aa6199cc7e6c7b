#!/usr/bin/env bash
# Installs the system packages the tests need, from Debian, when they are missing: Chromium (the e2e browser,
# which also ships the SwiftShader Vulkan driver that gives WebGPU on machines without a GPU) and the Vulkan
# loader (libvulkan1, for Dawn in Node). Idempotent: does nothing when both are present.
# As root it installs them; otherwise it prints the exact command and fails.
# Without apt-get (a Mac, another Linux), it installs nothing: when Node's `webgpu` package already finds an adapter
# (Metal, or the machine's own Vulkan driver), it says what it skipped and succeeds; otherwise it fails with what to
# install. CHROMIUM_PATH names the browser for the e2e tier when it is not /usr/bin/chromium.
#   --check   never install; only report (exit 1 when something is missing)
set -euo pipefail

mode=${1:-install}
missing=()
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || missing+=(chromium)
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then missing+=(libvulkan1); fi

if [ ${#missing[@]} -eq 0 ]; then
  if [ ! -f /usr/lib/chromium/vk_swiftshader_icd.json ] && [ -z "${VK_ICD_FILENAMES:-}" ]; then
    echo "setup-system: note: Chromium's SwiftShader driver is missing; Node tests need VK_ICD_FILENAMES pointing at a Vulkan driver." >&2
  fi
  exit 0
fi

cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"

# Prints the adapter Node's WebGPU (Dawn, through the webgpu package) finds, or fails with the reason.
node_adapter() {
  local icd=/usr/lib/chromium/vk_swiftshader_icd.json
  if [ -z "${VK_ICD_FILENAMES:-}" ] && [ -f "$icd" ]; then export VK_ICD_FILENAMES=$icd; fi
  local probe="const { create, globals } = await import('webgpu'); Object.assign(globalThis, globals);
    const a = await create([]).requestAdapter();
    if (!a) { console.error('no adapter'); process.exit(1); }
    const i = a.info ?? {}; console.log([i.vendor, i.architecture, i.description].filter(Boolean).join(' ') || 'an adapter');
    process.exit(0);"
  local run=(node --input-type=module -e "$probe")
  if command -v timeout >/dev/null 2>&1; then run=(timeout 60 "${run[@]}"); fi
  (cd "$(dirname "$0")/.." && "${run[@]}")
}

if ! command -v apt-get >/dev/null 2>&1; then
  err=$(mktemp)
  if adapter=$(node_adapter 2>"$err"); then
    rm -f "$err"
    echo "setup-system: no apt-get here; skipped ${missing[*]}: Node's WebGPU already has an adapter ($adapter), which is all the Node tests need." >&2
    if [[ " ${missing[*]} " == *" chromium "* ]]; then
      echo "setup-system: the browser tests (npm run test:e2e) need Chromium or Chrome: set CHROMIUM_PATH to its binary." >&2
    fi
    exit 0
  fi
  why=$(grep -m1 -E "^[A-Za-z]*Error|^no adapter" "$err" || tail -n 1 "$err"); rm -f "$err"
  echo "setup-system: missing ${missing[*]}, apt-get is not available, and Node's WebGPU finds no adapter (${why:-no reason given}). Install Chromium and the Vulkan loader with your system's package manager, or on Debian run: sudo sh -c '$cmd'" >&2
  exit 1
fi

if [ "$mode" = "--check" ]; then
  echo "setup-system: missing system packages: ${missing[*]}. Install them with: sudo sh -c '$cmd' (or run npm run setup:system as root)." >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-system: missing system packages: ${missing[*]}. This script installs them only as root. Run: sudo sh -c '$cmd'" >&2
  exit 1
fi
echo "setup-system: installing ${missing[*]} from Debian (about 440 MB, a few minutes)…"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-system: installed ${missing[*]}."
