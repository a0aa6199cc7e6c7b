#!/usr/bin/env bash
# Installs the system packages the tests need, from Debian, when they are missing: Chromium (the e2e browser,
# which also ships the SwiftShader Vulkan driver that gives WebGPU on machines without a GPU) and the Vulkan
# loader (libvulkan1, for Dawn in Node). Idempotent: does nothing when both are present.
# As root it installs them; otherwise it prints the exact command and fails.
#   --check   never install; only report (exit 1 when something is missing)
set -euo pipefail

mode=${1:-install}
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then missing+=(libvulkan1); fi

if [ ${#missing[@]} -eq 0 ]; then
  if [ ! -f /usr/lib/chromium/vk_swiftshader_icd.json ] && [ -z "${VK_ICD_FILENAMES:-}" ]; then
    echo "setup-system: note: Chromium's SwiftShader driver is missing; Node tests need VK_ICD_FILENAMES pointing at a Vulkan driver." >&2
  fi
  exit 0
fi

cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$mode" = "--check" ]; then
  echo "setup-system: missing system packages: ${missing[*]}. Install them with: sudo sh -c '$cmd' (or run npm run setup:system as root)." >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-system: missing system packages: ${missing[*]}. This script installs them only as root. Run: sudo sh -c '$cmd'" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-system: missing ${missing[*]} and apt-get is not available: install Chromium and the Vulkan loader with your system's package manager." >&2
  exit 1
fi
echo "setup-system: installing ${missing[*]} from Debian (about 440 MB, a few minutes)…"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-system: installed ${missing[*]}."
