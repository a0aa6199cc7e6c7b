#!/usr/bin/env bash
# Records OpenRLHF's argparse declarations for train_ppo_ray (src/export/fixtures/openrlhf-args.json) from a git
# copy of OpenRLHF at the fixture's commit: bash scripts/interop/record-openrlhf-args.sh OPENRLHF_GIT_DIR.
# The declarations are argparse's own (openrlhf_parser.py runs the file's parser-building code), not a reading of it.
set -euo pipefail
GIT_DIR="${1:?usage: record-openrlhf-args.sh OPENRLHF_GIT_DIR (a clone or bare repository of OpenRLHF/OpenRLHF)}"
HERE="$(cd "$(dirname "$0")" && pwd)"
FIXTURE="$HERE/../../src/export/fixtures/openrlhf-args.json"
COMMIT=3c3be6234e0cb353e76bb8019947db9dfe99fca7
SRC="$(mktemp -d)"
trap 'rm -rf "$SRC"' EXIT
git --git-dir "$GIT_DIR" archive "$COMMIT" openrlhf/cli/train_ppo_ray.py openrlhf/utils/config.py | tar -x -C "$SRC"
python3 "$HERE/openrlhf_parser.py" declarations "$SRC" | python3 -c '
import json, sys
args = json.load(sys.stdin)
print(json.dumps({
    "trainer": "OpenRLHF",
    "repo": "OpenRLHF/OpenRLHF",
    "commit": sys.argv[1],
    "version": "v0.11.0",
    "file": "openrlhf/cli/train_ppo_ray.py",
    "how": "argparse'"'"'s own declarations: scripts/interop/openrlhf_parser.py runs the parser-building statements of the file and reads parser._actions (store_true / store_false switches take no value; store takes nargs values of its type)",
    "args": args,
}, indent=1))' "$COMMIT" > "$FIXTURE"
echo "wrote $FIXTURE ($(grep -c '"action"' "$FIXTURE") flags)"
