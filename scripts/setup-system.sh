#!/usr/bin/env bash
# Installs the system packages the tests need, from Debian, when they are missing: Chromium (the e2e browser,
# which also ships the SwiftShader Vulkan driver that gives WebGPU on machines without a GPU), the Vulkan
# loader (libvulkan1, for Dawn in Node) and Mesa 25's lavapipe (mesa-vulkan-drivers, a second CPU Vulkan driver
# with shader-f16: the Vitest `lavapipe` project runs the kernel cases on it). Lavapipe is installed next to
# SwiftShader, never instead of it: Chromium keeps its own SwiftShader, and SwiftShader stays Node's default
# adapter (VK_ICD_FILENAMES picks lavapipe per process). On Debian 12 (bookworm) Mesa 25 comes from
# bookworm-backports: the script adds that suite (same mirror and keyring as the bookworm entry already in the apt
# sources) and fails, saying why, when it cannot; bookworm's own Mesa 22 lavapipe is refused by Dawn.
# Idempotent: does nothing when everything is present.
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

lavapipe_icd=/usr/share/vulkan/icd.d/lvp_icd.json
# Mesa's major version from dpkg (0 when mesa-vulkan-drivers is not installed).
mesa_major() {
  local v
  v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null | sed -nE 's/^([0-9]+:)?([0-9]+).*/\2/p' || true)
  echo "${v:-0}"
}
need_lavapipe=0
if command -v apt-get >/dev/null 2>&1 && { [ ! -f "$lavapipe_icd" ] || [ "$(mesa_major)" -lt 25 ]; }; then need_lavapipe=1; fi

# Adds bookworm-backports to apt's sources (deb822 file next to the existing entry), unless a source has it already.
add_backports() {
  if grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then return 0; fi
  local src uri keyring
  src=$(grep -lsE '^Suites:.*\bbookworm\b' /etc/apt/sources.list.d/*.sources | head -n 1 || true)
  if [ -n "$src" ]; then
    # The first paragraph whose Suites field lists bookworm: its URIs and Signed-By (POSIX awk, paragraph mode).
    read -r uri keyring < <(awk 'BEGIN { RS = "" } {
        n = split($0, line, "\n"); u = ""; k = ""; hit = 0
        for (i = 1; i <= n; i++) {
          if (line[i] ~ /^Suites:/ && (" " substr(line[i], 8) " ") ~ /[ \t]bookworm[ \t]/) hit = 1
          if (line[i] ~ /^URIs:/) { split(line[i], f, /[ \t]+/); u = f[2] }
          if (line[i] ~ /^Signed-By:/) { split(line[i], f, /[ \t]+/); k = f[2] }
        }
        if (hit && u != "") { print u, k; exit }
      }' "$src")
  else
    uri=$(grep -hsE '^deb\s+(\[[^]]*\]\s+)?\S+\s+bookworm\s' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | head -n 1 | sed -E 's/^deb\s+(\[[^]]*\]\s+)?(\S+).*/\2/' || true)
  fi
  if [ -z "$uri" ]; then
    echo "setup-system: cannot add bookworm-backports for Mesa 25's lavapipe: no apt source lists the bookworm suite to copy its mirror from. Add a bookworm-backports entry to /etc/apt/sources.list.d/ yourself, then rerun." >&2
    return 1
  fi
  { echo "Types: deb"; echo "URIs: $uri"; echo "Suites: bookworm-backports"; echo "Components: main"
    if [ -n "$keyring" ]; then echo "Signed-By: $keyring"; fi; } > /etc/apt/sources.list.d/debian-backports.sources
  echo "setup-system: added bookworm-backports ($uri) in /etc/apt/sources.list.d/debian-backports.sources" >&2
}

# Installs Mesa 25's lavapipe (mesa-vulkan-drivers): from bookworm-backports on Debian 12, else the release's own.
install_lavapipe() {
  local codename
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  if [ "$codename" = bookworm ]; then
    add_backports || return 1
    apt-get update -qq || { echo "setup-system: apt-get update failed after adding bookworm-backports (is the mirror reachable?)" >&2; return 1; }
    apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers >/dev/null ||
      { echo "setup-system: installing mesa-vulkan-drivers from bookworm-backports failed" >&2; return 1; }
  else
    apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers >/dev/null ||
      { echo "setup-system: installing mesa-vulkan-drivers failed" >&2; return 1; }
  fi
  if [ ! -f "$lavapipe_icd" ] || [ "$(mesa_major)" -lt 25 ]; then
    echo "setup-system: mesa-vulkan-drivers $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null) has no lavapipe Dawn accepts (Mesa 25 or later is needed; $lavapipe_icd)" >&2
    return 1
  fi
  echo "setup-system: installed lavapipe (mesa-vulkan-drivers $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers)), next to SwiftShader." >&2
}

if [ ${#missing[@]} -eq 0 ] && [ $need_lavapipe -eq 1 ]; then
  if [ "$mode" = "--check" ]; then
    echo "setup-system: missing Mesa 25's lavapipe (mesa-vulkan-drivers from bookworm-backports). Run npm run setup:system as root." >&2
    exit 1
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup-system: note: missing Mesa 25's lavapipe (npm run test:lavapipe needs it; npm test does not). This script installs it only as root: sudo npm run setup:system" >&2
    exit 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  install_lavapipe || echo "setup-system: note: lavapipe was not installed; npm test does not need it, npm run test:lavapipe does." >&2
  exit 0
fi

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
if [ $need_lavapipe -eq 1 ]; then
  install_lavapipe || echo "setup-system: note: lavapipe was not installed; npm test does not need it, npm run test:lavapipe does." >&2
fi
