"""verl's config composition for `python3 -m verl.trainer.main_ppo KEY=VALUE ...`, run apart from the trainer.

main_ppo composes its config with Hydra (verl/trainer/config/ppo_trainer.yaml and its defaults list) and applies the
command's overrides; Hydra and OmegaConf cannot be installed here without a network (omegaconf needs
antlr4-python3-runtime 4.9, hydra-core has no wheel on this machine), so this isolates the composition: the composed
config is verl's own flattened copy of it (verl/trainer/config/_generated_ppo_trainer.yaml, which verl regenerates
from the same composition with scripts/generate_trainer_config.sh), and each override is applied by Hydra's rules:
`key=value` must name a key the config has, `+key=value` one it lacks (Hydra: "Could not override 'key'" / "Could not
append to config. An item is already at 'key'"); values are read as Hydra's grammar reads these (numbers, True/False,
null, [a,b] lists, plain words). Then what verl's RLHFDataset does with the data: the parquet files the launch script
wrote are read, each row's chat-message prompt is given to the model's tokenizer with its chat template
(add_generation_prompt, as verl's dataset and agent loop apply it), and the longest must be data.max_prompt_length
exactly (a prompt longer is filtered out or refused by verl; a limit larger than every prompt pads every batch).

  python3 verl_config.py VERL_SOURCE_ROOT KEY=VALUE ...     # prints the overridden keys; exit 1 on a problem
"""

import json
import os
import re
import sys

import yaml

GENERATED = "verl/trainer/config/_generated_ppo_trainer.yaml"
MISSING = object()


def hydra_value(text):
    """A value as Hydra's override grammar reads the forms the export writes."""
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [hydra_value(x.strip()) for x in inner.split(",")] if inner else []
    if text in ("null", "None"):
        return None
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def lookup(config, path):
    node = config
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return MISSING
        node = node[part]
    return node


def assign(config, path, value):
    parts = path.split(".")
    node = config
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def main(root, overrides):
    config = yaml.safe_load(open(os.path.join(root, GENERATED), encoding="utf-8"))
    problems, applied = [], {}
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep:
            problems.append(f"{item}: not KEY=VALUE")
            continue
        added = key.startswith("+")
        key = key.lstrip("+")
        present = lookup(config, key) is not MISSING
        if added and present:
            problems.append(f"Could not append to config. An item is already at '{key}'")
        elif not added and not present:
            problems.append(f"Could not override '{key}'. Key '{key}' is not in struct (add it with +{key}=...)")
        else:
            assign(config, key, hydra_value(text))
            applied[key] = hydra_value(text)

    import pandas as pd
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(config["actor_rollout_ref"]["model"]["path"])
    lengths = []
    for split in ("train_files", "val_files"):
        frame = pd.read_parquet(config["data"][split])
        for messages in frame["prompt"]:
            text = tokenizer.apply_chat_template(
                [dict(m) for m in messages], add_generation_prompt=True, tokenize=False
            )
            lengths.append(len(tokenizer(text, add_special_tokens=False).input_ids))
        missing = {"data_source", "prompt", "ability", "reward_model", "extra_info"} - set(frame.columns)
        if missing:
            problems.append(f"{config['data'][split]}: no column {sorted(missing)} (verl's RLHFDataset layout)")
    limit = config["data"]["max_prompt_length"]
    if max(lengths) != limit:
        problems.append(
            f"data.max_prompt_length is {limit}; the longest prompt is {max(lengths)} tokens with the chat template"
        )
    for p in problems:
        print(f"verl config: {p}", file=sys.stderr)
    print(json.dumps({"overrides": len(applied), "longest_prompt_tokens": max(lengths), "max_prompt_length": limit}))
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
