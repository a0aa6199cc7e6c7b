#!/usr/bin/python3
"""Writes src/reference/fixtures/estimator-peers.json: MaxRL, F-GRPO and prime-rl's default loss computed by the
peers' OWN functions on random inputs, which src/reference/estimator-peers.test.ts and src/kernels/objective.test.ts
check the lab's estimators and objective against. CI never runs this script; the fixture is committed.

Nothing below is transcribed: each peer function is cut out of its source file at the commit named here (`git show`
on a local mirror of the repository, parsed with `ast`) and executed as written. Only the imports those files pull
in for other purposes (verifiers, jaxtyping, beartype, verl's registry) are replaced by stand-ins.

  prime-rl PrimeIntellect-ai/prime-rl 559b44772e471d1538537b8805cc77f3824a5e64 (2026-08-21):
    src/prime_rl/orchestrator/algo/max_rl.py (the whole module: MaxRLAlgorithm.score_group), with
    algo/base.py iter_trainable_traces and algo/routing.py assign_advantages;
    src/prime_rl/trainer/rl/loss.py LossInputs, LossOutputs, _safe_mean, compute_importance_ratio_and_mismatch_kl,
    default_loss_fn, ref_kl_loss_fn (the opd / opsd algorithms' loss), with packages/prime-rl-configs/.../trainer.py DefaultLossConfig's defaults. compute_loss sums
    default_loss_fn over the packed samples and divides by the rl token count (rl_scale): that division is done here.
  verl verl-project/verl 1dda039b9c6311889a9c9a26040677e1254814f9 (2026-08-22): verl/trainer/ppo/core_algos.py
    compute_grpo_outcome_advantage (F-GRPO's A_GRPO; verl's F-GRPO itself, f_grpo_gamma, is not in this commit, so
    its focal factor (1 - mu_pos)^gamma is the issue's formula, applied here to verl's GRPO output).
  TRL huggingface/trl f2cd57710ae345ea6428ae95363267fcf38a3dc8 (2026-07-24): trl/trainer/grpo_trainer.py
    GRPOTrainer.get_gamma_weights (vespo) with importance_sampling_ratio, cut out of the class. The ratio itself is made
    inline in _generate_and_score_completions (not a function): its token_truncate / token_mask lines are repeated
    here (exp((old - sampling) * mask), clamped to [clip_min, clip_max] or set to 0 outside), and the loss is
    _compute_loss's vespo line, -phi * A * logp, with no importance weight factor, over the token count ('dapo').

Run with Debian's interpreter (python3-torch), mirrors from the `fetch` tool:
    /usr/bin/python3 scripts/make-estimator-peer-fixture.py [--prime-rl DIR] [--verl DIR]
Everything runs in float64.
"""

import argparse
import ast
import asyncio
import json
import math
import os
import subprocess
import sys
import types
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import torch

PRIME_RL_COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"
TRL_COMMIT = "f2cd57710ae345ea6428ae95363267fcf38a3dc8"
VERL_COMMIT = "1dda039b9c6311889a9c9a26040677e1254814f9"

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20261206)


def source_at(mirror, commit, path):
    return subprocess.run(
        ["git", "--git-dir", mirror, "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def cut(source, names):
    """The top-level definitions `names` of a module's source, in file order, as one source string."""
    tree = ast.parse(source)
    keep = [n for n in tree.body if getattr(n, "name", None) in names]
    missing = set(names) - {n.name for n in keep}
    if missing:
        sys.exit(f"make-estimator-peer-fixture: {sorted(missing)} not found")
    lines = source.splitlines()
    spans = [(min([n.lineno] + [d.lineno for d in n.decorator_list]), n.end_lineno) for n in keep]
    return "\n\n".join("\n".join(lines[a - 1 : b]) for a, b in spans)  # decorators included


def run_defs(source, names, namespace):
    # Annotations stay unevaluated (as in the modules that say so): they name types of imports not made here.
    exec(compile("from __future__ import annotations\n" + cut(source, names), "<peer>", "exec"), namespace)
    return namespace


class Subscriptable:
    """jaxtyping's Float / Bool / Int: only subscripted in annotations here."""

    def __class_getitem__(cls, item):
        return torch.Tensor


def identity_decorator(*args, **kwargs):
    return lambda f: f


# ------------------------------------------------------------------------------------------ prime-rl: MaxRL


def prime_max_rl(mirror):
    base = source_at(mirror, PRIME_RL_COMMIT, "src/prime_rl/orchestrator/algo/base.py")
    routing = source_at(mirror, PRIME_RL_COMMIT, "src/prime_rl/orchestrator/algo/routing.py")
    module_src = source_at(mirror, PRIME_RL_COMMIT, "src/prime_rl/orchestrator/algo/max_rl.py")
    base_mod = types.ModuleType("prime_rl.orchestrator.algo.base")
    run_defs(base, ["iter_trainable_traces"], base_mod.__dict__)
    base_mod.Algorithm = object
    routing_mod = types.ModuleType("prime_rl.orchestrator.algo.routing")
    run_defs(routing, ["assign_advantages"], routing_mod.__dict__)
    vf = types.ModuleType("verifiers.v1")
    for name, mod in {
        "verifiers": types.ModuleType("verifiers"),
        "verifiers.v1": vf,
        "prime_rl": types.ModuleType("prime_rl"),
        "prime_rl.orchestrator": types.ModuleType("prime_rl.orchestrator"),
        "prime_rl.orchestrator.algo": types.ModuleType("prime_rl.orchestrator.algo"),
        "prime_rl.orchestrator.algo.base": base_mod,
        "prime_rl.orchestrator.algo.routing": routing_mod,
    }.items():
        sys.modules[name] = mod
    sys.modules["verifiers"].v1 = vf
    ns = {"__name__": "prime_max_rl"}
    exec(compile(module_src, "max_rl.py", "exec"), ns)
    return ns["MaxRLAlgorithm"]


class Node:
    def __init__(self, n):
        self.mask = [1] * n
        self.token_ids = list(range(n))
        self.advantages = None


class Trace:
    def __init__(self, i, reward):
        self.id = f"t{i}"
        self.reward = reward
        self.has_error = False
        self.agent = types.SimpleNamespace(trainable=True)
        self.nodes = [Node(2)]


def max_rl_cases(MaxRLAlgorithm):
    out = []
    for G, groups in ((4, 5), (8, 3), (2, 6)):
        rewards = torch.bernoulli(torch.full((groups * G,), 0.35), generator=gen)
        rewards[:G] = 0.0  # one all-failed group (no signal)
        advantages = []
        for g in range(groups):
            traces = [Trace(i, float(rewards[g * G + i])) for i in range(G)]
            episodes = [types.SimpleNamespace(traces=[t]) for t in traces]
            asyncio.run(MaxRLAlgorithm.score_group(None, episodes))
            advantages += [t.nodes[0].advantages[0] for t in traces]
        out.append({"G": G, "rewards": rewards.tolist(), "advantages": advantages})
    return out


# ------------------------------------------------------------------------------------------ verl: GRPO for F-GRPO


def verl_grpo(mirror):
    src = source_at(mirror, VERL_COMMIT, "verl/trainer/ppo/core_algos.py")
    ns = {
        "torch": torch,
        "np": np,
        "defaultdict": defaultdict,
        "Optional": __import__("typing").Optional,
        "AlgoConfig": object,
        "register_adv_est": identity_decorator,
        "AdvantageEstimator": types.SimpleNamespace(GRPO="grpo"),
    }
    return run_defs(src, ["compute_grpo_outcome_advantage"], ns)["compute_grpo_outcome_advantage"]


def f_grpo_cases(compute_grpo_outcome_advantage):
    out = []
    for G, groups, gamma, r_correct, r_wrong, levels, norm in (
        (4, 4, 1.0, 1.0, 0.0, (0.0, 1.0), True),
        (6, 3, 2.0, 1.0, 0.0, (0.0, 1.0), True),
        (5, 3, 0.5, 1.0, 0.1, (0.1, 0.4, 1.0), False),
    ):
        N, L = G * groups, 3
        idx = torch.randint(0, len(levels), (N,), generator=gen)
        scores = torch.tensor([levels[i] for i in idx.tolist()])
        mask = torch.ones(N, L)
        token_level_rewards = torch.zeros(N, L)
        token_level_rewards[:, -1] = scores
        index = np.array([i // G for i in range(N)])
        # The lab's GRPO guard is TRL's 1e-4 (verl's default is 1e-6): the peer is called with the lab's.
        a_grpo, _ = compute_grpo_outcome_advantage(
            token_level_rewards, mask, index, epsilon=1e-4, norm_adv_by_std_in_grpo=norm
        )
        mean = scores.view(groups, G).mean(dim=1)
        mu_pos = torch.clamp((mean - r_wrong) / (r_correct - r_wrong), 0, 1)
        focal = (1 - mu_pos) ** gamma
        adv = a_grpo[:, 0] * focal.repeat_interleave(G)
        out.append({
            "G": G, "gamma": gamma, "reward_correct": r_correct, "reward_wrong": r_wrong,
            "norm_adv_by_std_in_grpo": norm, "rewards": scores.tolist(), "advantages": adv.tolist(),
        })
    return out


# ------------------------------------------------------------------------------------------ prime-rl: default loss


def prime_default_loss(mirror):
    src = source_at(mirror, PRIME_RL_COMMIT, "src/prime_rl/trainer/rl/loss.py")
    ns = {
        "torch": torch,
        "Tensor": torch.Tensor,
        "Float": Subscriptable,
        "Bool": Subscriptable,
        "Int": Subscriptable,
        "dataclass": dataclass,
        "field": field,
        "Any": __import__("typing").Any,
        "Callable": __import__("typing").Callable,
        "DefaultLossConfig": object,
    }
    names = [
        "LossInputs",
        "LossOutputs",
        "_safe_mean",
        "compute_importance_ratio_and_mismatch_kl",
        "default_loss_fn",
        "ref_kl_loss_fn",
    ]
    return run_defs(src, names, ns)


def prime_loss_cases(ns):
    out = []
    N, L = 4, 7
    lengths = [7, 5, 3, 6]
    for dppo_mask_low, dppo_mask_high, adv_tau, kl_tau in ((0.2, 0.2, 1.0, 1e-3), (0.05, 0.08, 0.7, 0.05)):
        trainer = -0.05 - 2.5 * torch.rand(N, L, generator=gen)
        inference = torch.clamp(trainer + 0.9 * (2 * torch.rand(N, L, generator=gen) - 1), max=-0.01)
        adv = (2 * torch.rand(N, 1, generator=gen) - 1) * 1.5 + 0.3 * (2 * torch.rand(N, L, generator=gen) - 1)
        adv[2, 1] = 0.0  # a zero advantage: prime-rl masks it by the low side
        mask = torch.tensor([[1.0 if t < n else 0.0 for t in range(L)] for n in lengths])
        cfg = types.SimpleNamespace(
            dppo_mask_low=dppo_mask_low, dppo_mask_high=dppo_mask_high, adv_tau=adv_tau, kl_tau=kl_tau
        )
        x = trainer.clone().requires_grad_(True)
        total = 0.0
        for i, n in enumerate(lengths):
            inputs = ns["LossInputs"](
                trainer_logprobs=x[i, :n],
                inference_logprobs=inference[i, :n],
                ref_logprobs=None,
                advantages=adv[i, :n],
                loss_mask=torch.ones(n, dtype=torch.bool),
            )
            total = total + ns["default_loss_fn"](inputs, cfg).loss
        loss = total / sum(lengths)  # compute_loss: rl_loss / rl_scale, rl_scale the rl token count
        loss.backward()
        out.append({
            "config": {"dppo_mask_low": dppo_mask_low, "dppo_mask_high": dppo_mask_high, "adv_tau": adv_tau, "kl_tau": kl_tau},
            "trainer_logprobs": trainer.tolist(), "inference_logprobs": inference.tolist(),
            "advantages": adv.tolist(), "mask": mask.tolist(),
            "loss": loss.item(), "grad": (x.grad * mask).tolist(),
        })
    return out


def prime_ref_kl_cases(ns):
    """prime-rl's opd loss (ref_kl_loss_fn) on the student's own samples (trainer = inference log-probs, ratio 1, as
    in a fully on-policy step): its gradient, over the ref_kl token count as compute_loss divides, and its ref_kl
    metric. The lab's distillation advantage through its objective must give the same gradient."""
    out = []
    for lengths, L in (([7, 5, 3, 6], 7), ([1, 9, 4], 9)):
        N = len(lengths)
        student = -0.05 - 3.0 * torch.rand(N, L, generator=gen)
        teacher = -0.05 - 3.0 * torch.rand(N, L, generator=gen)
        mask = torch.tensor([[1.0 if t < n else 0.0 for t in range(L)] for n in lengths])
        x = student.clone().requires_grad_(True)
        total = 0.0
        ref_kl = []
        for i, n in enumerate(lengths):
            inputs = ns["LossInputs"](
                trainer_logprobs=x[i, :n],
                inference_logprobs=student[i, :n],
                ref_logprobs=teacher[i, :n],
                advantages=torch.zeros(n),
                loss_mask=torch.ones(n, dtype=torch.bool),
            )
            o = ns["ref_kl_loss_fn"](inputs)
            total = total + o.loss
            ref_kl.append(o.metrics["ref_kl"].item())
        loss = total / sum(lengths)  # compute_loss: ref_kl_loss / ref_kl_scale, the ref_kl token count
        loss.backward()
        out.append({
            "student_logprobs": student.tolist(), "teacher_logprobs": teacher.tolist(), "mask": mask.tolist(),
            "loss": loss.item(), "grad": (x.grad * mask).tolist(),
            # prime-rl logs ref_kl per sample; over samples of these lengths, the token-weighted mean is the batch's
            "ref_kl_token_mean": sum(k * n for k, n in zip(ref_kl, lengths)) / sum(lengths),
        })
    return out


# ------------------------------------------------------------------------------------------ TRL: vespo with token IS


def trl_gamma_weights(mirror):
    src = source_at(mirror, TRL_COMMIT, "trl/trainer/grpo_trainer.py")
    tree = ast.parse(src)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "GRPOTrainer")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "get_gamma_weights")
    lines = src.splitlines()
    start = min([fn.lineno] + [d.lineno for d in fn.decorator_list])
    body = "\n".join(line[4:] for line in lines[start - 1 : fn.end_lineno])  # dedent out of the class
    ns = {"torch": torch, "math": __import__("math")}
    exec(compile("from __future__ import annotations\n" + body, "grpo_trainer.py", "exec"), ns)
    return ns["get_gamma_weights"]


def vespo_is_cases(get_gamma_weights):
    out = []
    N, L = 4, 6
    lp = -0.05 - 2.5 * torch.rand(N, L, generator=gen)
    old = lp + 0.08 * (2 * torch.rand(N, L, generator=gen) - 1)
    sampling = old + 0.2 * (2 * torch.rand(N, L, generator=gen) - 1)
    adv = torch.tensor([[1.2], [-0.7], [0.0], [-1.5]])
    mask = torch.tensor([[1] * 6, [1, 1, 1, 1, 0, 0], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]], dtype=torch.float64)
    for mode, clip_min, clip_max in (("token_truncate", 0.9, 1.1), ("token_mask", 0.85, 1.18), ("token_truncate", None, 1.05)):
        ratio = torch.exp((old - sampling) * mask)
        if mode == "token_truncate":
            ratio = torch.clamp(ratio, min=clip_min, max=clip_max)
        else:
            lo = clip_min if clip_min is not None else -math.inf
            hi = clip_max if clip_max is not None else math.inf
            ratio = ratio.masked_fill((ratio < lo) | (ratio > hi), value=0.0)
        x = lp.clone().requires_grad_(True)
        phi_seq = get_gamma_weights(adv, x - old, mask, ratio)
        per_token_loss = -phi_seq * adv * x
        loss = (per_token_loss * mask).sum() / mask.sum().clamp(min=1.0)
        loss.backward()
        out.append({
            "mode": mode, "clip_min": clip_min, "clip_max": clip_max,
            "logp": lp.tolist(), "old_logp": old.tolist(), "sampling_logp": sampling.tolist(),
            "advantages": adv.tolist(), "mask": mask.tolist(),
            "loss": loss.item(), "phi_seq": phi_seq.flatten().tolist(), "grad": (x.grad * mask).tolist(),
        })
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prime-rl", default="/work/.mirror/PrimeIntellect-ai+prime-rl/repo")
    ap.add_argument("--verl", default="/work/.mirror/verl-project+verl/repo")
    ap.add_argument("--trl", default="/work/.mirror/huggingface+trl/repo")
    args = ap.parse_args()
    fixture = {
        "what": "cases computed by the peers' own functions; see scripts/make-estimator-peer-fixture.py",
        "sources": {
            "prime-rl": f"PrimeIntellect-ai/prime-rl@{PRIME_RL_COMMIT} src/prime_rl/orchestrator/algo/max_rl.py, src/prime_rl/trainer/rl/loss.py",
            "verl": f"verl-project/verl@{VERL_COMMIT} verl/trainer/ppo/core_algos.py compute_grpo_outcome_advantage",
            "trl": f"huggingface/trl@{TRL_COMMIT} trl/trainer/grpo_trainer.py GRPOTrainer.get_gamma_weights",
        },
        "prime_max_rl": max_rl_cases(prime_max_rl(args.prime_rl)),
        "f_grpo_on_verl_grpo": f_grpo_cases(verl_grpo(args.verl)),
        "prime_default_loss": prime_loss_cases(prime_default_loss(args.prime_rl)),
        "trl_vespo_token_is": vespo_is_cases(trl_gamma_weights(args.trl)),
        # after the cases above, which keep their draws
        "prime_ref_kl": prime_ref_kl_cases(prime_default_loss(args.prime_rl)),
    }
    path = os.path.join(os.path.dirname(__file__), "..", "src", "reference", "fixtures", "estimator-peers.json")
    with open(path, "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    print(f"wrote {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
