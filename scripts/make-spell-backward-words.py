#!/usr/bin/python3
"""Writes src/tasks/spell-backward-words.ts: the words of the spell_backward task, a fixed sample of reasoning-gym's
word list (open-thought/reasoning-gym 49b07130b3fcd12f2d064bba7c43869543a0e7e7, reasoning_gym/data/words3to10.txt,
Apache-2.0; the file spell_backward reads by default). Kept: lowercase ASCII words; from each length 3..10, every
k-th word in the file's order so that PER_LENGTH remain (all of them where fewer exist). CI never runs this script.

    /usr/bin/python3 scripts/make-spell-backward-words.py [--mirror DIR]
"""

import argparse
import os
import subprocess

COMMIT = "49b07130b3fcd12f2d064bba7c43869543a0e7e7"
PER_LENGTH = 300


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default="/work/.mirror/open-thought+reasoning-gym/repo")
    args = ap.parse_args()
    text = subprocess.run(
        ["git", "--git-dir", args.mirror, "show", f"{COMMIT}:reasoning_gym/data/words3to10.txt"],
        check=True, capture_output=True, text=True,
    ).stdout
    words = [w.strip() for w in text.splitlines()]
    kept = []
    for n in range(3, 11):
        same = [w for w in words if len(w) == n and w.isascii() and w.isalpha() and w.islower()]
        step = max(1, len(same) // PER_LENGTH)
        kept += same[::step][:PER_LENGTH]
    lines = [
        "// The words of the spell_backward task (src/tasks/spell-backward.ts): a fixed sample of reasoning-gym's word list",
        f"// (open-thought/reasoning-gym {COMMIT[:7]}, reasoning_gym/data/words3to10.txt, Apache-2.0), lowercase words of 3 to 10",
        f"// letters, at most {PER_LENGTH} of each length. Written by scripts/make-spell-backward-words.py; do not edit.",
        "",
        "/** Words of 3 to 10 lowercase letters, space-separated, grouped by length. */",
        "export const SPELL_BACKWARD_WORDS =",
    ]
    chunk = []
    for w in kept:
        if sum(len(x) + 1 for x in chunk) + len(w) > 100:
            lines.append(f"  '{' '.join(chunk)} ' +")
            chunk = []
        chunk.append(w)
    lines.append(f"  '{' '.join(chunk)}';")
    path = os.path.join(os.path.dirname(__file__), "..", "src", "tasks", "spell-backward-words.ts")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {os.path.normpath(path)}: {len(kept)} words")


if __name__ == "__main__":
    main()
