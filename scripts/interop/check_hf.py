"""The lab's `--to hf` export in transformers and PEFT: each folder loads with from_pretrained (no missing or unexpected
keys), the adapter with PeftModel.from_pretrained on its base, and their greedy generations equal the lab's.

  python3 check_hf.py CASES.json

CASES.json: a list of {"name", "model" (a folder), "base" and "adapter" (for a PEFT case, else null), "chat",
"lab" (the JSON `npm run generate -- --greedy --json` printed for the same prompt)}. For each: the prompt's token ids
(the chat template applied by transformers where "chat") must equal the lab's, greedy decoding must give the lab's
completion tokens, and each completion token's log-probability under transformers (float32, teacher-forced on the
lab's tokens) must be within LOGPROB_TOL of the lab's. Prints one line per case; exits 1 on any difference.
"""

import json
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

LOGPROB_TOL = 1e-4


def load(case):
    if case["adapter"] is None:
        model, info = AutoModelForCausalLM.from_pretrained(
            case["model"], dtype=torch.float32, output_loading_info=True
        )
        problems = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
        if problems:
            raise SystemExit(f"{case['name']}: from_pretrained reports {problems}")
        return model
    from peft import PeftModel

    base = AutoModelForCausalLM.from_pretrained(case["base"], dtype=torch.float32)
    return PeftModel.from_pretrained(base, case["adapter"])


def check(case):
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(case["model"])
    lab = case["lab"]
    if case["chat"]:
        text = tok.apply_chat_template(
            [{"role": "user", "content": lab["prompt"]}], add_generation_prompt=True, tokenize=False
        )
        prompt_ids = tok(text, add_special_tokens=False).input_ids
    else:
        prompt_ids = tok(lab["prompt"]).input_ids
    if prompt_ids != lab["prompt_ids"]:
        return f"prompt tokens differ: transformers {prompt_ids}, lab {lab['prompt_ids']}"
    model = load(case).eval()
    want = lab["completion_ids"]
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt_ids]),
            attention_mask=torch.ones(1, len(prompt_ids), dtype=torch.long),
            do_sample=False,
            max_new_tokens=len(want),
            pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else 0,
        )
        got = out[0, len(prompt_ids):].tolist()
        ids = torch.tensor([prompt_ids + want])
        logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
    if got != want:
        return f"greedy tokens differ: transformers {got}, lab {want}"
    theirs = [logp[len(prompt_ids) - 1 + i, t].item() for i, t in enumerate(want)]
    diff = max(abs(a - b["logprob"]) for a, b in zip(theirs, lab["tokens"]))
    if diff > LOGPROB_TOL:
        return f"log-probabilities differ by {diff:.2e} (> {LOGPROB_TOL})"
    return f"ok: {len(prompt_ids)} prompt tokens, {len(want)} completion tokens equal, max |dlogp| {diff:.1e}"


if __name__ == "__main__":
    failed = 0
    for case in json.load(open(sys.argv[1])):
        verdict = check(case)
        failed += not verdict.startswith("ok")
        print(f"  {case['name']}: {verdict}")
    sys.exit(1 if failed else 0)
