#!/usr/bin/env python3
"""Writes src/io/fixtures/tokenizers-parity.json: what Hugging Face tokenizers (the Rust library transformers
uses) does with the shipped tokenizer.json files and with seeded, broken variants of them, so that
src/io/tokenizer-parity.test.ts can check the lab's loader against it with no Python: on every file tokenizers
accepts and the lab accepts, the lab's ids equal tokenizers' on every text; every file tokenizers refuses, the lab
refuses; a file tokenizers reads with other added-token ids than the file states, the lab refuses.

Each variant is a base file and one mutation (applied the same way by the test):
  {"op": "insert_merge", "at": i, "merge": "a b"}      a merge put at place i of model.merges
  {"op": "drop_vocab", "token": t}                     a model.vocab entry removed
  {"op": "added_id", "index": i, "id": n}              added_tokens[i] given id n

CI never runs this script; the fixture is committed. tokenizers installs from the machine's wheels in a venv:
    python3 -m venv /work/wt/hub-venv
    /work/wt/hub-venv/bin/pip install --no-index --find-links <the wheels folder> --no-deps tokenizers
    /work/wt/hub-venv/bin/python scripts/make-tokenizer-parity-fixture.py
"""

import copy
import json
import os
import random

import tokenizers
from tokenizers import Tokenizer

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BASES = [
    "public/models/tiny-qwen2/tokenizer.json",
    "public/models/tiny-llama/tokenizer.json",
    "public/models/copy-reward-model/tokenizer.json",
    "public/models/sentiment-char/tokenizer.json",
    "public/tokenizers/char/tokenizer.json",
]
OUT = "src/io/fixtures/tokenizers-parity.json"
VARIANTS_PER_BASE = 12
TEXTS_PER_BASE = 40

WORDS = ["copy", "abc", "the", "hello", "12", "345", "+", "=", "é", "中文", "🙂", "\t", "\n", "  ", "ab", "ba", "x"]


def texts(rng: random.Random, specials: list[str]) -> list[str]:
    out = ["copy: abc", "hello world", "1 + 2 = 3", "", " ", "a  b\n\nc", "ÿ\u00a0z"]
    pool = WORDS + specials
    while len(out) < TEXTS_PER_BASE:
        n = rng.randint(1, 8)
        parts = [rng.choice(pool) if rng.random() < 0.7 else chr(rng.randint(32, 126)) for _ in range(n)]
        out.append(rng.choice(["", " "]).join(parts))
    return out


def mutate(base: dict, m: dict) -> dict:
    j = copy.deepcopy(base)
    if m["op"] == "insert_merge":
        merges = j["model"]["merges"]
        merge = m["merge"] if not merges or isinstance(merges[0], str) else m["merge"].split(" ")
        merges.insert(m["at"], merge)
    elif m["op"] == "drop_vocab":
        del j["model"]["vocab"][m["token"]]
    elif m["op"] == "added_id":
        j["added_tokens"][m["index"]]["id"] = m["id"]
    return j


def mutations(rng: random.Random, base: dict) -> list[dict]:
    vocab = list(base["model"]["vocab"].keys()) if isinstance(base["model"]["vocab"], dict) else []
    merges = base["model"].get("merges") or []
    parts = sorted({p for m in merges for p in (m.split(" ") if isinstance(m, str) else m)})
    out = []
    for _ in range(VARIANTS_PER_BASE):
        kind = rng.choice(["insert_merge", "drop_vocab", "added_id"])
        if kind == "insert_merge" and vocab:
            a, b = rng.choice(vocab), rng.choice(vocab)
            if " " in a or " " in b:
                continue
            out.append({"op": "insert_merge", "at": rng.randint(0, len(merges)), "merge": f"{a} {b}"})
        elif kind == "drop_vocab" and (parts or vocab):
            out.append({"op": "drop_vocab", "token": rng.choice(parts or vocab)})
        elif kind == "added_id" and base.get("added_tokens"):
            i = rng.randrange(len(base["added_tokens"]))
            out.append({"op": "added_id", "index": i, "id": rng.choice([0, 1, len(vocab) + 7, 5000])})
    return out


def run(j: dict, sample: list[str]) -> dict:
    try:
        tk = Tokenizer.from_str(json.dumps(j))
    except BaseException as e:  # tokenizers refuses the file (or panics on it: a PanicException)
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0]}"}
    added = {t.content: i for i, t in tk.get_added_tokens_decoder().items()}
    return {"error": None, "added": added, "ids": [tk.encode(t, add_special_tokens=False).ids for t in sample]}


def main() -> None:
    rng = random.Random(41)
    cases = []
    for path in BASES:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            base = json.load(f)
        specials = [a["content"] for a in base.get("added_tokens", [])]
        sample = texts(rng, specials)
        cases.append({"base": path, "mutation": None, "texts": sample, **run(base, sample)})
        for m in mutations(rng, base):
            cases.append({"base": path, "mutation": m, "texts": sample, **run(mutate(base, m), sample)})
    with open(os.path.join(ROOT, OUT), "w", encoding="utf-8") as f:
        json.dump({"tokenizers": tokenizers.__version__, "cases": cases}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    refused = sum(1 for c in cases if c["error"])
    print(f"{OUT}: {len(cases)} cases ({refused} refused by tokenizers {tokenizers.__version__})")


if __name__ == "__main__":
    main()
