#!/usr/bin/env python3
"""Loads a checkpoint directory made by RL Lab (model.safetensors + config.json + tokenizer.json) in PyTorch,
without any RL Lab code, and prints the greedy completion of a prompt, to compare with
`npm run generate -- --checkpoint DIR --prompt P --greedy`.

    /usr/bin/python3 scripts/check-checkpoint.py public/checkpoints/copy "copy:abcab="

The model is scripts/make-parity-fixture.py's plain-torch reading of Hugging Face's LlamaForCausalLM (the
`transformers` package is not installable on these machines); the safetensors file is read by hand.
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib.util

spec = importlib.util.spec_from_file_location("fixture", os.path.join(os.path.dirname(os.path.abspath(__file__)), "make-parity-fixture.py"))
fixture = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fixture)
torch = fixture.torch


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            sys.exit(f"check-checkpoint: {name} is {info['dtype']}, expected F32")
        b, e = info["data_offsets"]
        t = torch.frombuffer(bytearray(data[base + b : base + e]), dtype=torch.float32)
        out[name] = t.reshape(info["shape"]).to(torch.float64)
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ckpt, prompt = sys.argv[1], sys.argv[2]
    max_new = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    config = json.load(open(os.path.join(ckpt, "config.json")))
    tok = json.load(open(os.path.join(ckpt, "tokenizer.json")))
    vocab = tok["model"]["vocab"]
    for added in tok.get("added_tokens", []):
        vocab[added["content"]] = added["id"]
    inv = {i: s for s, i in vocab.items()}
    P = read_safetensors(os.path.join(ckpt, "model.safetensors"))
    ids = [config["bos_token_id"]] + [vocab[ch] for ch in prompt]
    out = []
    for _ in range(max_new):
        logits = fixture.forward(config, P, torch.tensor([ids]))
        nxt = int(torch.argmax(logits[0, -1]))
        if nxt == config["eos_token_id"]:
            break
        out.append(nxt)
        ids.append(nxt)
    print("".join(inv[i] for i in out))


if __name__ == "__main__":
    main()
