#!/usr/bin/python3
"""Writes src/tasks/fixtures/spell-backward-scores.json: reasoning-gym's own SpellBackwardDataset.score_answer
(open-thought/reasoning-gym 49b07130b3fcd12f2d064bba7c43869543a0e7e7, reasoning_gym/algorithmic/spell_backward.py),
cut out of its class with `ast` and executed as written (its `self` is not read), on answers made to hit every branch:
exact, case only, prefixes, longer answers, shuffles, one wrong letter, empty, unrelated. src/tasks/spell-backward.test.ts
checks the lab's spellBackwardScore against it. CI never runs this script.

    /usr/bin/python3 scripts/make-spell-backward-fixture.py [--mirror DIR]
"""

import argparse
import ast
import json
import os
import random
import subprocess
from typing import Any, Optional

COMMIT = "49b07130b3fcd12f2d064bba7c43869543a0e7e7"


def score_answer_fn(mirror):
    src = subprocess.run(
        ["git", "--git-dir", mirror, "show", f"{COMMIT}:reasoning_gym/algorithmic/spell_backward.py"],
        check=True, capture_output=True, text=True,
    ).stdout
    tree = ast.parse(src)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SpellBackwardDataset")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "score_answer")
    ns = {"Optional": Optional, "Any": Any}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "spell_backward.py", "exec"), ns)
    return ns["score_answer"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default="/work/.mirror/open-thought+reasoning-gym/repo")
    args = ap.parse_args()
    score = score_answer_fn(args.mirror)
    rng = random.Random(20261206)
    letters = "abcdefghijklmnopqrstuvwxyz"
    cases = []
    for n in range(3, 11):
        for _ in range(6):
            answer = "".join(rng.choice(letters) for _ in range(n))
            shuffled = "".join(rng.sample(answer, n))
            one_off = answer[: n // 2] + ("z" if answer[n // 2] != "z" else "y") + answer[n // 2 + 1 :]
            for got in dict.fromkeys([  # in order, without repeats
                answer, answer.upper(), answer[: n - 1], answer[:1], answer + rng.choice(letters), answer + "ab",
                shuffled, one_off, "", "".join(rng.choice(letters) for _ in range(rng.randint(1, 12))),
            ]):
                cases.append({"answer": answer, "completion": got, "score": score(None, got, {"answer": answer})})
    path = os.path.join(os.path.dirname(__file__), "..", "src", "tasks", "fixtures", "spell-backward-scores.json")
    with open(path, "w") as f:
        json.dump({"source": f"open-thought/reasoning-gym@{COMMIT} reasoning_gym/algorithmic/spell_backward.py SpellBackwardDataset.score_answer", "cases": cases}, f, indent=0)
        f.write("\n")
    print(f"wrote {os.path.normpath(path)}: {len(cases)} cases")


if __name__ == "__main__":
    main()
