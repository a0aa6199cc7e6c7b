#!/usr/bin/env bash
# Runs the benchmark (npm run bench) from a bundle, on a machine with no Node.js and no network.
# Packed into .devbench/ by scripts/device-bench/pack.sh. Run from the repo root: bash .devbench/run.sh [bench args...]   e.g. bash .devbench/run.sh --preset all --reps 5
# The args pass straight to the bench, so its recorded command reads "npm run bench -- <args>".
# Results (BENCHMARKS.md, the device's detail file docs/benchmarks/<device>.md, the report <out>/latest.{md,json})
# and log.txt go to $OUT.
set -o pipefail

OUT=${OUT:-/tmp/devbench-out}
mkdir -p "$OUT"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# --out as the bench reads it (default runs/bench), to copy its report afterwards.
bench_out=runs/bench
prev=
for a in "$@"; do
  [ "$prev" = "--out" ] && bench_out=$a
  case $a in --out=*) bench_out=${a#--out=} ;; esac
  prev=$a
done

unxz_to() { # unxz_to SRC.xz DEST: xz if present, else python3's lzma
  if command -v xz >/dev/null 2>&1; then xz -dc "$1" > "$2.part"
  else python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],"wb"))' "$1" "$2.part"
  fi && mv "$2.part" "$2"
}

setup() {
  echo "== devbench setup ($(date -u +%FT%TZ), $(uname -m), $(nproc) cores)"
  T=${DEVBENCH_TMP:-/tmp/devbench}
  mkdir -p "$T"
  [ -x "$T/node" ] || { unxz_to "$HERE/node.xz" "$T/node" && chmod +x "$T/node"; } || return 1
  [ -f "$T/dawn.node" ] || unxz_to "$HERE/dawn.node.xz" "$T/dawn.node" || return 1
  NODE=$T/node
  export DAWN_NODE_PATH=$T/dawn.node

  # Vulkan loader: unpack the bundled libvulkan1 when the system has none.
  if ! ldconfig -p 2>/dev/null | grep 'libvulkan\.so\.1' >/dev/null; then  # no grep -q: with pipefail, ldconfig's SIGPIPE would read as "missing"
    if command -v dpkg >/dev/null 2>&1; then
      for f in "$HERE"/gl/*.deb; do dpkg -x "$f" /; done
      ldconfig
      echo "installed the Vulkan loader from $HERE/gl"
    else # no dpkg: unpack the deb's data.tar.* with python3 into $T/lib
      python3 - "$T/lib" "$HERE"/gl/*.deb <<'PY'
import io, os, sys, tarfile
dest = sys.argv[1]
os.makedirs(dest, exist_ok=True)
for deb in sys.argv[2:]:
    b = open(deb, 'rb').read(); i = 8
    while i < len(b):
        name = b[i:i+16].decode().strip().rstrip('/'); size = int(b[i+48:i+58]); data = b[i+60:i+60+size]
        i += 60 + size + (size & 1)
        if name.startswith('data.tar'):
            with tarfile.open(fileobj=io.BytesIO(data)) as t:
                for m in t.getmembers():
                    if '.so' in m.name and (m.isfile() or m.issym()):
                        m.name = os.path.basename(m.name); t.extract(m, dest)
PY
      export LD_LIBRARY_PATH=$T/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      echo "unpacked the Vulkan loader into $T/lib (no dpkg)"
    fi
  fi
  # dawn.node needs GLIBCXX_3.4.30 (GCC 12's libstdc++); use the bundled one if the system's is older.
  sysstd=$(ldconfig -p 2>/dev/null | awk '/libstdc\+\+\.so\.6 .*x86-64/ && !p {print $NF; p=1}')
  if [ -z "$sysstd" ] || ! grep -qa 'GLIBCXX_3\.4\.30' "$sysstd"; then
    mkdir -p "$T/std"; [ -f "$T/std/libstdc++.so.6" ] || unxz_to "$HERE/gl/libstdc++.so.6.xz" "$T/std/libstdc++.so.6"
    export LD_LIBRARY_PATH=$T/std${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "using the bundled libstdc++ (system's: ${sysstd:-none})"
  fi

  # The NVIDIA Vulkan driver, when its manifest is where container runtimes put it.
  if [ -z "${VK_ICD_FILENAMES:-}" ] && [ -z "${VK_DRIVER_FILES:-}" ]; then
    for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
      if [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; break; fi
    done
  fi
  echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-} VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-} LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  for icd in ${VK_DRIVER_FILES//:/ } ${VK_ICD_FILENAMES//:/ }; do
    [ -f "$icd" ] || { echo "  $icd: missing"; continue; }
    lib=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ICD"]["library_path"])' "$icd" 2>/dev/null)
    case $lib in ./*|../*) lib=$(dirname "$icd")/$lib ;; esac
    echo "  $icd -> ${lib:-?} ($( { [ -f "$lib" ] || ldconfig -p | grep -F "${lib##*/}" >/dev/null; } && echo found || echo NOT found))"
  done
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
  command -v vulkaninfo >/dev/null 2>&1 && vulkaninfo --summary 2>&1 | sed -n '/Devices:/,$p' | head -20
  echo "node $("$NODE" --version); bench args: $*"
  return 0
}

main() {
  setup "$@" || { echo "devbench: setup failed"; return 1; }
  local t0=$SECONDS rc
  "$NODE" "$HERE/bench.mjs" "$@"
  rc=$?
  echo "== bench exit $rc after $((SECONDS - t0)) s"
  cp -f BENCHMARKS.md "$OUT/" 2>/dev/null
  mkdir -p "$OUT/benchmarks" && cp -f docs/benchmarks/*.md "$OUT/benchmarks/" 2>/dev/null
  for f in "$bench_out"/latest.*; do [ -f "$f" ] && cp -f "$f" "$OUT/"; done
  ls -la "$OUT"
  return $rc
}

main "$@" 2>&1 | tee "$OUT/log.txt"
