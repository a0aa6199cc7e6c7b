#!/usr/bin/env bash
# Packs the benchmark for a machine that has a GPU but no Node.js and no network (a lent device machine): writes
# .devbench/ (ignored by git, about 40 MB) in the repo root with
#   bench.mjs       src/cli/bench.ts bundled by esbuild (build.mjs beside this script);
#   run.sh          the runner (beside this script): unpacks the rest, finds the NVIDIA Vulkan driver, runs the bench;
#   node.xz         this machine's Node.js binary;
#   dawn.node.xz    Dawn's Node addon from node_modules/webgpu (the WebGPU implementation the bench runs on);
#   gl/             the Vulkan loader and glvnd as Debian packages (apt-get download, amd64), and this machine's
#                   libstdc++ for Dawn's GLIBCXX_3.4.30 where the device machine's is older.
# Then, on the device machine, from the repo root with .devbench carried over:
#   DEVBENCH_TMP=/tmp/db bash .devbench/run.sh --selftest --preset nano,micro --sections phase,compare,rollout,grpo,autotune,real,matmul-4096 --reps 3
# (what `npm run bench:gpu` runs), which leaves BENCHMARKS.md, docs/benchmarks/*.md (as benchmarks/), the report (latest.{md,json}) and log.txt in $OUT.
# Needs xz, apt-get and Debian's package lists (the same sources the setup script installs from).
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=scripts/device-bench
DEST=.devbench
mkdir -p "$DEST/gl"

node "$HERE/build.mjs"
cp "$HERE/run.sh" "$DEST/run.sh"

node_bin=$(command -v node)
[ -f "$DEST/node.xz" ] || xz -9 -T0 < "$node_bin" > "$DEST/node.xz"
dawn=$(find node_modules/webgpu/dist -path '*linux-x64*' -name dawn.node | head -1)
[ -n "$dawn" ] || { echo "pack.sh: no linux-x64 dawn.node under node_modules/webgpu/dist (npm ci first)" >&2; exit 1; }
[ -f "$DEST/dawn.node.xz" ] || xz -9 -T0 < "$dawn" > "$DEST/dawn.node.xz"

if ! ls "$DEST"/gl/libvulkan1_*.deb >/dev/null 2>&1; then
  lists=$(mktemp -d)
  mkdir -p "$lists/partial"
  o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$lists"
  # shellcheck disable=SC2086
  apt-get $o update >/dev/null
  # shellcheck disable=SC2086
  (cd "$DEST/gl" && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
  rm -rf "$lists"
fi
std=$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/ {print $NF; exit}')
[ -f "$DEST/gl/libstdc++.so.6.xz" ] || xz -9 < "$(readlink -f "$std")" > "$DEST/gl/libstdc++.so.6.xz"

du -sh "$DEST"
ls -la "$DEST" "$DEST/gl"
