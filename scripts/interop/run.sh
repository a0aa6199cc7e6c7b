#!/usr/bin/env bash
# npm run test:interop: the lab's exports in the real libraries and trainers, on this machine's CPU (opt-in, not in CI).
#  1. A Python virtual environment from the wheels on this machine, never a network index: pip --no-index, with
#     --find-links naming the folders pip's own configuration names (its find-links, and the files/ folder beside
#     each file:// index it names). torch is the CPU build. Set RL_LAB_WHEELS="dir1:dir2" to name the folders.
#  2. Two runs trained in the lab on the shipped tiny models (CPU backend): tiny-qwen2 with LoRA and its chat template,
#     tiny-llama with every weight. `npm run export -- --to hf` writes them; transformers loads each folder and PEFT
#     the adapter on its base, and greedy generation gives the lab's tokens, log-probabilities within 1e-4
#     (check_hf.py).
#  3. TRL: the TRL exports (GRPO; DAPO with LoRA and a rollout correction; RLOO) run one optimizer step on the CPU from
#     the exported tiny-qwen2 folder, and the trainer_state.json each writes imports back into the lab.
#  4. OpenRLHF: every preset's launch script, run by bash, reaches OpenRLHF's own argument parser, hierarchize and
#     validation (openrlhf_parser.py) from its source at the commit src/export/fixtures/openrlhf-args.json names.
#  5. verl: every preset's launch script converts its data to parquet and its overrides are applied to verl's
#     composed config at the commit src/export/fixtures/verl.json names (verl_config.py says what is isolated), with
#     data.max_prompt_length the longest prompt in tiny-qwen2's tokens, chat template applied, by transformers.
# Sources: RL_LAB_OPENRLHF_GIT and RL_LAB_VERL_GIT name git copies (a clone or bare repository) of OpenRLHF/OpenRLHF
# and volcengine/verl holding those commits. The venv is made once in .interop/venv (delete it to make it again).
set -euo pipefail
START=$(date +%s)
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/scripts/interop"
cd "$ROOT"
VENV="$ROOT/.interop/venv"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/rl-lab-interop-XXXXXX")"
# RL_LAB_INTEROP_KEEP=1 keeps the folder (exports, logs) for a look after a failure.
[ -n "${RL_LAB_INTEROP_KEEP:-}" ] && echo "work folder: $WORK (kept)" || trap 'rm -rf "$WORK"' EXIT
step() { echo "== $* ($(($(date +%s) - START)) s)"; }
fixture() { node -e "process.stdout.write(require('$ROOT/src/export/fixtures/$1.json').commit)"; }

# 1. The virtual environment.
step "venv: $VENV"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import transformers, peft, trl, pandas, pyarrow, yaml' 2>/dev/null; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  WHEELS="${RL_LAB_WHEELS:-$(python3 - <<'PY'
import os, subprocess
out = subprocess.run(["python3", "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
dirs = []
for line in out.splitlines():
    key, _, value = line.partition("=")
    value = value.strip().strip("'\"")
    for item in value.split():
        if key.endswith("find-links"):
            dirs.append(item)
        elif key.endswith("index-url") and item.startswith("file://"):
            dirs.append(os.path.join(os.path.dirname(item[len("file://"):].rstrip("/")), "files"))
print(":".join(d for d in dict.fromkeys(dirs) if os.path.isdir(d)))
PY
)}"
  [ -n "$WHEELS" ] || { echo "no wheel folders: set RL_LAB_WHEELS=dir1:dir2 (folders of .whl files)" >&2; exit 2; }
  LINKS=()
  IFS=: read -r -a DIRS <<<"$WHEELS"
  for d in "${DIRS[@]}"; do LINKS+=(--find-links "$d"); done
  echo "wheels from: $WHEELS"
  TORCH_CPU="$(for d in "${DIRS[@]}"; do ls "$d"/torch-*+cpu-*.whl 2>/dev/null || true; done | sort -V | tail -1)"
  [ -n "$TORCH_CPU" ] || { echo "no CPU torch wheel (torch-*+cpu-*.whl) in $WHEELS" >&2; exit 2; }
  PIP=("$VENV/bin/python" -m pip install -q --no-index "${LINKS[@]}")
  "${PIP[@]}" "$TORCH_CPU"
  "${PIP[@]}" "transformers==5.18.0" "peft==0.21.0" "trl==1.13.0" accelerate datasets pandas pyarrow pyyaml jinja2
fi
PY="$VENV/bin/python"
"$PY" -c 'import torch, transformers, peft, trl; print(f"torch {torch.__version__}, transformers {transformers.__version__}, peft {peft.__version__}, trl {trl.__version__}")'

# The trainers' sources at the recorded commits.
OPENRLHF_COMMIT="$(fixture openrlhf-args)"
VERL_COMMIT="$(fixture verl)"
# Defaults: the copies this workplace's repository mirror keeps.
OPENRLHF_GIT="${RL_LAB_OPENRLHF_GIT:-/work/.mirror/OpenRLHF+OpenRLHF/repo}"
VERL_GIT="${RL_LAB_VERL_GIT:-/work/.mirror/volcengine+verl/repo}"
for g in "$OPENRLHF_GIT:$OPENRLHF_COMMIT" "$VERL_GIT:$VERL_COMMIT"; do
  git --git-dir "${g%:*}" cat-file -e "${g##*:}^{commit}" 2>/dev/null ||
    { echo "no commit ${g##*:} in ${g%:*}: set RL_LAB_OPENRLHF_GIT / RL_LAB_VERL_GIT to git copies that have it" >&2; exit 2; }
done
mkdir -p "$WORK/openrlhf" "$WORK/verl"
git --git-dir "$OPENRLHF_GIT" archive "$OPENRLHF_COMMIT" openrlhf/cli/train_ppo_ray.py openrlhf/utils/config.py | tar -x -C "$WORK/openrlhf"
git --git-dir "$VERL_GIT" archive "$VERL_COMMIT" verl/trainer/config/_generated_ppo_trainer.yaml | tar -x -C "$WORK/verl"
echo "OpenRLHF @ $OPENRLHF_COMMIT, verl @ $VERL_COMMIT"
# `python3 -m openrlhf.cli.train_ppo_ray` and `python3 -m verl.trainer.main_ppo` in the launch scripts reach the
# isolated parser and config composition; every other python3 is the venv's.
mkdir -p "$WORK/bin"
cat > "$WORK/bin/python3" <<SHIM
#!/usr/bin/env bash
if [ "\${1:-}" = -m ] && [ "\${2:-}" = openrlhf.cli.train_ppo_ray ]; then shift 2; exec "$PY" "$HERE/openrlhf_parser.py" parse "$WORK/openrlhf" -- "\$@"; fi
if [ "\${1:-}" = -m ] && [ "\${2:-}" = verl.trainer.main_ppo ]; then shift 2; exec "$PY" "$HERE/verl_config.py" "$WORK/verl" "\$@"; fi
exec "$PY" "\$@"
SHIM
chmod +x "$WORK/bin/python3"

# 2. Lab runs, exported as Hugging Face folders, in transformers and PEFT.
QWEN="$ROOT/public/models/tiny-qwen2"
LLAMA="$ROOT/public/models/tiny-llama"
COMMON=(--task copy --train_batch_size 2 --num_generations 2 --max_completion_length 8 --eval_every 0 --inspect-groups 0 --backend cpu --steps 1 --quiet)
step "lab: train tiny-qwen2 (LoRA, chat template) and tiny-llama (every weight), one step each, CPU backend"
npm run -s train -- "${COMMON[@]}" --checkpoint "$QWEN" --chat_template true --lora_rank 4 --learning_rate 0.01 --out "$WORK/run-qwen" >/dev/null
npm run -s train -- "${COMMON[@]}" --checkpoint "$LLAMA" --learning_rate 0.001 --out "$WORK/run-llama" >/dev/null
npm run -s export -- --to hf --run "$WORK/run-qwen" --out "$WORK/hf" >/dev/null
npm run -s export -- --to hf --run "$WORK/run-llama" --out "$WORK/hf" >/dev/null
ls "$WORK/hf"
step "lab: greedy generation on each exported folder"
PROMPT='copy: lab'
npm run -s generate -- --checkpoint "$WORK/hf/run-qwen-step1" --prompt "$PROMPT" --chat --greedy --json --max-new-tokens 12 >"$WORK/gen-qwen.json"
npm run -s generate -- --checkpoint "$WORK/hf/run-llama-step1" --prompt "$PROMPT" --greedy --json --max-new-tokens 12 >"$WORK/gen-llama.json"
node -e '
const [w, qwen, llama] = process.argv.slice(1);
const lab = (f) => JSON.parse(require("fs").readFileSync(`${w}/${f}`, "utf8"));
require("fs").writeFileSync(`${w}/cases.json`, JSON.stringify([
  { name: "tiny-qwen2 LoRA run, merged folder (from_pretrained)", model: `${w}/hf/run-qwen-step1`, base: null, adapter: null, chat: true, lab: lab("gen-qwen.json") },
  { name: "tiny-qwen2 LoRA run, adapter on its base (PeftModel.from_pretrained)", model: `${w}/hf/run-qwen-step1`, base: qwen, adapter: `${w}/hf/run-qwen-step1-adapter`, chat: true, lab: lab("gen-qwen.json") },
  { name: "tiny-llama run (from_pretrained)", model: `${w}/hf/run-llama-step1`, base: null, adapter: null, chat: false, lab: lab("gen-llama.json") },
]));' "$WORK" "$QWEN" "$LLAMA"
step "transformers and PEFT: load and generate"
"$PY" "$HERE/check_hf.py" "$WORK/cases.json"
"$PY" - "$WORK/hf/run-qwen-step1" "$QWEN" <<'PY'
import json, sys
out, src = sys.argv[1:]
read = lambda d, f: json.load(open(f"{d}/{f}"))
assert read(out, "config.json")["eos_token_id"] == read(src, "config.json")["eos_token_id"], "config.json eos_token_id"
assert read(out, "generation_config.json")["eos_token_id"] == read(src, "generation_config.json")["eos_token_id"]
print(f"  end of sequence: config.json {read(out, 'config.json')['eos_token_id']}, generation_config.json {read(out, 'generation_config.json')['eos_token_id']}, as the source's")
PY

# 3. TRL: one optimizer step on the CPU each, the log imported back.
TRL_CASES=(
  "grpo|--preset grpo"
  "dapo-lora-tis|--preset dapo --lora_rank 4 --tis_cap 2"
  "rloo|--preset rloo"
)
for c in "${TRL_CASES[@]}"; do
  name="${c%%|*}"
  read -r -a flags <<<"${c#*|}"
  step "TRL $name: one optimizer step on the CPU"
  npm run -s export -- --to trl "${flags[@]}" --task copy --steps 1 --train_batch_size 2 --num_generations 2 \
    --num_minibatches 1 --num_iterations 1 --gradient_accumulation_steps 1 --max_completion_length 8 --eval_every 0 \
    --hf-model "$WORK/hf/run-qwen-step1" --out "$WORK/trl-$name" >/dev/null
  (cd "$WORK/trl-$name" && CUDA_VISIBLE_DEVICES= "$PY" train_trl.py >train.log 2>&1) || { tail -30 "$WORK/trl-$name/train.log"; exit 1; }
  "$PY" - "$WORK/trl-$name/out/trainer_state.json" <<'PY'
import json, sys
state = json.load(open(sys.argv[1]))
assert state["global_step"] == 1, f"global_step {state['global_step']}, not 1"
keys = sorted({k for entry in state["log_history"] for k in entry})
print(f"  TRL trainer_state.json: global_step {state['global_step']}, {len(keys)} keys logged ({', '.join(keys[:8])}, ...)")
PY
  npx tsx scripts/interop/import-trainer-state.ts "$WORK/trl-$name/out/trainer_state.json"
done

# 4 and 5. Every preset's OpenRLHF command through OpenRLHF's parser; every preset's verl overrides through verl's config.
step "export every preset to OpenRLHF and verl (countdown; verl's prompt length in tiny-qwen2's tokens)"
PRESETS="$(npx tsx --import ./src/cli/register-raw.mjs scripts/interop/export-presets.ts "$WORK" "$QWEN")"
openrlhf() {
  if [ -f "$WORK/openrlhf-$1/REFUSED" ]; then sed 's/^/  OpenRLHF: refused: /' "$WORK/openrlhf-$1/REFUSED"; return; fi
  PATH="$WORK/bin:$PATH" MODEL=org/model bash "$WORK/openrlhf-$1/run_openrlhf.sh" >"$WORK/openrlhf-$1/parsed.json"
  "$PY" - "$WORK/openrlhf-$1/parsed.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
print(f"  OpenRLHF's parser: estimator {a['algo']['advantage']['estimator']}, apply_chat_template {a['data']['apply_chat_template']}, gradient_checkpointing_enable {a['actor']['gradient_checkpointing_enable']}, n_samples_per_prompt {a['rollout']['n_samples_per_prompt']}")
PY
}
for p in $PRESETS; do
  step "OpenRLHF and verl: preset $p"
  openrlhf "$p"
  if [ -f "$WORK/verl-$p/REFUSED" ]; then
    sed 's/^/  verl: refused: /' "$WORK/verl-$p/REFUSED"
  else
    PATH="$WORK/bin:$PATH" MODEL="$QWEN" bash "$WORK/verl-$p/run_verl.sh" | sed 's/^/  verl: /'
  fi
done
step "OpenRLHF: grpo with the chat template and gradient checkpointing on (switches given bare)"
openrlhf grpo-switches-on
step "interop: every check passed"
