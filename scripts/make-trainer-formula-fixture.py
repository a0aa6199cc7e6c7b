#!/usr/bin/python3
"""Writes src/reference/fixtures/trainer-formulas.json: small cases computed by functions transcribed from the
trainers' own sources, which the lab's twins and GPU kernels are checked against (src/reference/trainer-formulas.test.ts
and src/kernels/objective.test.ts). CI never runs this script; the fixture is committed.

Run with Debian's interpreter (the `python3` on PATH has no torch):
    /usr/bin/python3 scripts/make-trainer-formula-fixture.py

Sources (read at these commits; each function below is a transcription, names kept):
  verl verl-project/verl 1dda039b9c6311889a9c9a26040677e1254814f9 (2026-08-22), verl/trainer/ppo/core_algos.py:
    kl_penalty / kl_penalty_forward (the straight-through `+` estimators), compute_grpo_passk_outcome_advantage,
    compute_policy_loss_dppo_tv, compute_policy_loss_dppo_kl, compute_policy_loss_dro, with agg_loss in
    "token-mean" on one process (the masked mean), compute_optimal_token_baseline_advantage (with its default
    handle_zero_tail=True, which ray_trainer.compute_advantage does not override), with apply_kl_penalty's token
    rewards (scores at the last valid token minus beta * k1); verl/utils/torch_functional.py:
    calculate_sum_pi_squared_from_logits. (At volcengine/verl b178a3cd, the commit of the export's key list,
    kl_penalty passed the name with its `+` on to kl_penalty_forward, which raised NotImplementedError for `k3+`;
    the later commit strips the `+` first, as here.)
  TRL huggingface/trl f2cd57710ae345ea6428ae95363267fcf38a3dc8, trl/trainer/grpo_trainer.py:
    the per-token KL with use_bias_correction_kl (_compute_loss), and multi_objective_aggregation
    normalize_then_sum (_generate_and_score_completions), with trl/trainer/utils.py nanstd, and the vespo loss
    with get_gamma_weights.
Everything runs in float64.
"""

import json
import math
import os
import sys
from collections import defaultdict

try:
    import torch
except ImportError as e:  # pragma: no cover
    sys.exit(f"make-trainer-formula-fixture: `import torch` failed ({e}); run with /usr/bin/python3 (python3-torch)")

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20260727)


def rand(*shape, lo=-1.0, hi=1.0):
    return lo + (hi - lo) * torch.rand(*shape, generator=gen)


# ------------------------------------------------------------------------------------------ verl: kl_penalty


def kl_penalty_forward(logprob, ref_logprob, kl_penalty):
    if kl_penalty in ("kl", "k1"):
        return logprob - ref_logprob
    if kl_penalty == "abs":
        return (logprob - ref_logprob).abs()
    if kl_penalty in ("mse", "k2"):
        return 0.5 * (logprob - ref_logprob).square()
    if kl_penalty in ("low_var_kl", "k3"):
        kl = ref_logprob - logprob
        kl = torch.clamp(kl, min=-20, max=20)
        ratio = torch.exp(kl)
        kld = (ratio - kl - 1).contiguous()
        return torch.clamp(kld, min=-10, max=10)
    raise NotImplementedError


def kl_penalty(logprob, ref_logprob, kl_penalty):
    base_kl_penalty = kl_penalty[:-1] if kl_penalty.endswith("+") else kl_penalty
    forward_score = kl_penalty_forward(logprob, ref_logprob, base_kl_penalty)
    if not kl_penalty.endswith("+") or kl_penalty in ("mse", "k2"):
        return forward_score
    backward_score = 0.5 * (logprob - ref_logprob).square()
    return backward_score - backward_score.detach() + forward_score.detach()


def verl_kl_cases():
    out = []
    n = 12
    logprob = rand(n, lo=-3.0, hi=-0.05)
    # u = logprob - ref in [-4, 4]: a few far tokens where k3 > 10 and low_var_kl clamps.
    u = torch.cat([rand(n - 2, lo=-1.5, hi=1.5), torch.tensor([-3.5, 3.0])])
    ref = logprob - u
    for name in ("k1+", "k3+", "low_var_kl+"):
        lp = logprob.clone().requires_grad_(True)
        k = kl_penalty(lp, ref, name)
        k.sum().backward()
        out.append(
            {
                "verl_name": name,
                "logprob": logprob.tolist(),
                "ref_logprob": ref.tolist(),
                "value": k.detach().tolist(),
                "grad": lp.grad.tolist(),
            }
        )
    return out


# ------------------------------------------------------------------------------------------ verl: DPPO and DRO


def masked_mean(x, mask):
    return (x * mask).sum() / mask.sum()


def compute_policy_loss_dppo(kind, old_log_prob, log_prob, advantages, response_mask, clip_ratio_low, clip_ratio_high, clip_ratio_c):
    negative_approx_kl = log_prob - old_log_prob
    negative_approx_kl = torch.clamp(negative_approx_kl, min=-20.0, max=20.0)
    ratio = torch.exp(negative_approx_kl)
    truncated_ratio = torch.clamp(ratio, max=clip_ratio_c)
    truncated_ratio = truncated_ratio.detach()
    prob = torch.exp(log_prob)
    old_prob = torch.exp(old_log_prob)
    if kind == "dppo_tv":
        valid_positive_mask = (prob - old_prob) <= clip_ratio_high
        valid_negative_mask = (prob - old_prob) >= -clip_ratio_low
    else:
        binary_kl = old_prob * (old_log_prob - log_prob) + (1 - old_prob) * torch.log(
            (1.0 - old_prob + 1e-8) / (1.0 - prob + 1e-8)
        )
        valid_positive_mask = (binary_kl <= clip_ratio_high) | (prob <= old_prob)
        valid_negative_mask = (binary_kl <= clip_ratio_low) | (prob >= old_prob)
    valid_mask = torch.where(advantages > 0, valid_positive_mask, valid_negative_mask)
    valid_mask = valid_mask.detach().float()
    pg_losses = -advantages * truncated_ratio * log_prob * valid_mask
    pg_loss = masked_mean(pg_losses, response_mask)
    pg_clipfrac = masked_mean((1.0 - valid_mask).float(), response_mask)
    return pg_loss, pg_clipfrac


def compute_policy_loss_dro(old_log_prob, log_prob, advantages, response_mask, beta):
    log_ratio = log_prob - old_log_prob
    pg_losses = -(log_prob * advantages - 0.5 * beta * log_ratio.square())
    return masked_mean(pg_losses, response_mask)


def verl_loss_cases():
    out = []
    N, L = 3, 7
    lp = rand(N, L, lo=-3.0, hi=-0.05)
    old = torch.clamp(lp + rand(N, L, lo=-0.9, hi=0.9), max=-0.01)
    adv = rand(N, 1, lo=-1.5, hi=1.5) + rand(N, L, lo=-0.3, hi=0.3)
    mask = torch.tensor([[1] * 7, [1, 1, 1, 0, 1, 0, 0], [1, 1, 0, 0, 0, 0, 0]], dtype=torch.float64)
    settings = {
        "dppo_tv": {"clip_ratio_low": 0.05, "clip_ratio_high": 0.08, "clip_ratio_c": 1.3},
        "dppo_kl": {"clip_ratio_low": 0.003, "clip_ratio_high": 0.005, "clip_ratio_c": 1.3},
        "dro": {"dro_beta": 0.7},
    }
    for name, cfg in settings.items():
        x = lp.clone().requires_grad_(True)
        if name == "dro":
            loss = compute_policy_loss_dro(old, x, adv, mask, cfg["dro_beta"])
            clipfrac = 0.0
        else:
            loss, clipfrac = compute_policy_loss_dppo(name, old, x, adv, mask, **cfg)
            clipfrac = clipfrac.item()
        loss.backward()
        out.append(
            {
                "loss_mode": name,
                "config": cfg,
                "log_prob": lp.tolist(),
                "old_log_prob": old.tolist(),
                "advantages": adv.tolist(),
                "response_mask": mask.tolist(),
                "pg_loss": loss.item(),
                "pg_clipfrac": clipfrac,
                "grad": (x.grad * mask).tolist(),
            }
        )
    return out


# ------------------------------------------------------------------------------------------ verl: grpo_passk


def compute_grpo_passk_outcome_advantage(scores, index, epsilon=1e-6, norm_adv_by_std_in_grpo=True):
    advantages = torch.zeros_like(scores)
    id2scores = defaultdict(list)
    id2indices = defaultdict(list)
    with torch.no_grad():
        for i in range(scores.shape[0]):
            id2scores[index[i]].append(scores[i])
            id2indices[index[i]].append(i)
        for idx in id2scores:
            rewards = torch.stack(id2scores[idx])
            topk, topk_idx = torch.topk(rewards, 2)
            r_max, r_second_max = topk[0], topk[1]
            i_max = id2indices[idx][topk_idx[0].item()]
            advantage = r_max - r_second_max
            if norm_adv_by_std_in_grpo:
                std = torch.std(rewards)
                advantage = advantage / (std + epsilon)
            advantages[i_max] = advantage
    return advantages


def passk_cases():
    out = []
    for B, G, norm in ((3, 4, True), (2, 5, False), (4, 2, True)):
        # Distinct rewards (torch.topk's choice among ties is unspecified), one group with a runner-up close to the top.
        scores = torch.round(rand(B * G, lo=0.0, hi=1.0) * 1000) / 1000 + torch.arange(B * G) * 1e-6
        index = [i // G for i in range(B * G)]
        adv = compute_grpo_passk_outcome_advantage(scores, index, norm_adv_by_std_in_grpo=norm)
        out.append({"G": G, "norm_adv_by_std_in_grpo": norm, "scores": scores.tolist(), "advantages": adv.tolist()})
    return out


# ------------------------------------------------------------------------------------------ verl: optimal_token_baseline


def calculate_sum_pi_squared_from_logits(logits):
    return torch.exp(torch.logsumexp(2.0 * logits, dim=-1) - 2.0 * torch.logsumexp(logits, dim=-1))


def compute_optimal_token_baseline_advantage(
    token_level_rewards, response_mask, index, old_log_probs, sum_pi_squared, rollout_is_weights=None,
    handle_zero_tail=True, epsilon=1e-8,
):
    with torch.no_grad():
        batch_size, seq_len = token_level_rewards.shape
        returns = (token_level_rewards * response_mask).flip(dims=[-1]).cumsum(dim=-1).flip(dims=[-1])
        pi_t = torch.exp(old_log_probs)
        w_per_timestep = 1 - 2 * pi_t + sum_pi_squared
        if rollout_is_weights is not None:
            w_per_timestep = w_per_timestep * (rollout_is_weights**2)
        w_cumulative = (w_per_timestep * response_mask).cumsum(dim=-1)
        prompt_groups = defaultdict(list)
        for i in range(batch_size):
            prompt_groups[index[i]].append(i)
        baselines = torch.zeros_like(returns)
        for _, trajectory_indices in prompt_groups.items():
            N = len(trajectory_indices)
            if N == 1:
                continue
            traj_idx = torch.tensor(trajectory_indices)
            returns_group = returns[traj_idx]
            w_cumulative_group = w_cumulative[traj_idx]
            mask_group = response_mask[traj_idx]
            numerator = (returns_group * w_cumulative_group * mask_group).sum(dim=0)
            denominator = (w_cumulative_group * mask_group).sum(dim=0) + epsilon
            baseline_per_step = numerator / denominator
            baselines[traj_idx] = baseline_per_step.unsqueeze(0).expand(N, -1)
            if handle_zero_tail:
                response_lengths = mask_group.sum(dim=-1)
                sorted_lengths, _ = torch.sort(response_lengths)
                max_length = int(sorted_lengths[-1].item())
                second_max_length = int(sorted_lengths[-2].item())
                max_length_idx = (response_lengths == max_length).nonzero(as_tuple=True)[0]
                if max_length_idx.numel() == 1 and max_length > second_max_length:
                    max_length_traj_idx = trajectory_indices[int(max_length_idx[0])]
                    baselines[max_length_traj_idx, second_max_length:] = 0.0
        advantages = (returns - baselines) * response_mask
    return advantages, returns


def otb_cases():
    out = []
    # (groups, G, L, V, beta, rollout IS, lengths): a single longest row (its tail's baseline is zeroed), a tie for
    # the longest (kept), an empty row, a group of one (A = G).
    for B, G, L, V, beta, use_is, lengths in (
        (2, 3, 5, 4, 0.0, False, [5, 3, 2, 4, 4, 1]),
        (1, 4, 4, 3, 0.0, True, [4, 2, 0, 3]),
        (2, 2, 3, 3, 0.1, False, [3, 3, 1, 2]),
        (3, 1, 3, 4, 0.0, False, [3, 1, 2]),
    ):
        N = B * G
        logits = rand(N, L, V, lo=-3.0, hi=3.0)
        tau = 0.8
        z = logits / tau
        tokens = torch.randint(0, V, (N, L), generator=gen)
        old_log_probs = torch.log_softmax(z, dim=-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
        sum_pi_squared = calculate_sum_pi_squared_from_logits(z)
        mask = torch.tensor([[1.0 if t < n else 0.0 for t in range(L)] for n in lengths])
        scores = torch.round(rand(N, lo=0.0, hi=1.0))
        k1 = rand(N, L, lo=-0.5, hi=0.5)
        token_level_scores = torch.zeros(N, L)
        for i, n in enumerate(lengths):
            if n > 0:
                token_level_scores[i, n - 1] = scores[i]
        token_level_rewards = token_level_scores - beta * k1 * mask
        is_weights = rand(N, L, lo=0.5, hi=2.0) if use_is else None
        index = [i // G for i in range(N)]
        adv, _ = compute_optimal_token_baseline_advantage(
            token_level_rewards, mask, index, old_log_probs, sum_pi_squared, rollout_is_weights=is_weights
        )
        out.append({
            "G": G, "L": L, "V": V, "temperature": tau, "beta": beta,
            "logits": logits.reshape(N * L, V).tolist(), "tokens": tokens.reshape(-1).tolist(),
            "scores": scores.tolist(), "mask": mask.reshape(-1).tolist(), "k1": k1.reshape(-1).tolist(),
            "rollout_is_weights": is_weights.reshape(-1).tolist() if use_is else None,
            "old_log_probs": old_log_probs.reshape(-1).tolist(), "sum_pi_squared": sum_pi_squared.reshape(-1).tolist(),
            "advantages": adv.reshape(-1).tolist(),
        })
    return out


# ------------------------------------------------------------------------------------------ TRL


def nanstd(tensor, dim=None, keepdim=False):
    mean = torch.nanmean(tensor, dim=dim, keepdim=True)
    variance = torch.nanmean((tensor - mean) ** 2, dim=dim, keepdim=True)
    count = torch.sum(~torch.isnan(tensor), dim=dim, keepdim=True)
    correction = count / (count - 1)
    correction = torch.where(count > 1, correction, torch.full_like(correction, float("nan")))
    variance *= correction
    std = torch.sqrt(variance)
    if keepdim:
        return std
    if dim is None:
        return std.squeeze()
    return std.squeeze(dim)


def normalize_then_sum(rewards_per_func, reward_weights, num_generations):
    grouped = rewards_per_func.view(-1, num_generations, rewards_per_func.shape[1])
    mean_k = torch.nanmean(grouped, dim=1, keepdim=True)
    std_k = nanstd(grouped, dim=1, keepdim=True) if num_generations > 1 else torch.zeros_like(mean_k)
    reward_k = (grouped - mean_k) / (std_k + 1e-4)
    reward_k = reward_k.view(-1, rewards_per_func.shape[1])
    rewards = (reward_k * reward_weights.unsqueeze(0)).nansum(dim=1)
    std_rewards = nanstd(rewards).expand_as(rewards) if rewards.numel() > 1 else torch.zeros_like(rewards)
    return (rewards - torch.nanmean(rewards)) / (std_rewards + 1e-4)


def gdpo_cases():
    out = []
    for B, G, K in ((3, 4, 2), (2, 6, 3)):
        # An accuracy-like 0/1 reward, a small-spread format-like one, and (K = 3) a continuous one.
        cols = [torch.bernoulli(torch.full((B * G,), 0.5), generator=gen), 0.1 * torch.round(rand(B * G, lo=0, hi=1) * 3)]
        if K == 3:
            cols.append(rand(B * G, lo=-2, hi=2))
        r = torch.stack(cols, dim=1)
        w = torch.tensor([1.0, 0.5, 2.0][:K])
        adv = normalize_then_sum(r, w, G)
        out.append({"G": G, "rewards_per_func": r.tolist(), "reward_weights": w.tolist(), "advantages": adv.tolist()})
    return out


def trl_kl_loss(per_token_logps, old_per_token_logps, ref_per_token_logps, mask, importance_sampling_level):
    """TRL's KL term alone (beta = 1, advantages 0, loss_type 'dapo' on one process: sum / token count)."""
    log_ratio = per_token_logps - old_per_token_logps
    if importance_sampling_level == "token":
        log_importance_weights = log_ratio
    else:
        log_importance_weights = (log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)
        log_importance_weights = log_importance_weights.unsqueeze(-1)
    coef_1 = torch.exp(log_importance_weights)
    per_token_kl = torch.exp(ref_per_token_logps - per_token_logps) - (ref_per_token_logps - per_token_logps) - 1
    per_token_kl = per_token_kl * coef_1  # use_bias_correction_kl
    per_token_loss = 1.0 * per_token_kl
    return (per_token_loss * mask).sum() / mask.sum().clamp(min=1.0), per_token_kl


def bias_kl_cases():
    out = []
    N, L = 3, 5
    lp = rand(N, L, lo=-3.0, hi=-0.05)
    old = lp + rand(N, L, lo=-0.6, hi=0.6)
    ref = lp + rand(N, L, lo=-0.5, hi=0.5)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 1, 0], [1, 0, 0, 0, 0]], dtype=torch.float64)
    for level in ("token", "sequence"):
        x = lp.clone().requires_grad_(True)
        loss, per_token_kl = trl_kl_loss(x, old, ref, mask, level)
        loss.backward()
        out.append(
            {
                "importance_sampling_level": level,
                "logp": lp.tolist(),
                "old_logp": old.tolist(),
                "ref_logp": ref.tolist(),
                "mask": mask.tolist(),
                "loss": loss.item(),
                "per_token_kl": (per_token_kl * mask).detach().tolist(),
                "grad": x.grad.tolist(),
            }
        )
    return out


def get_gamma_weights(advantages, log_ratio_per_token, mask, importance_sampling_ratio, k_pos=2.0, lambda_pos=3.0, k_neg=3.0, lambda_neg=2.0):
    with torch.no_grad():
        lower_clamp = math.log(1e-8)
        log_ratio_clamped = torch.clamp(log_ratio_per_token, -20.0, 20.0)
        seq_log_ratio = torch.sum(log_ratio_clamped * mask, dim=-1, keepdim=True)
        if importance_sampling_ratio is not None:
            log_is_ratio = torch.clamp(torch.log(importance_sampling_ratio), lower_clamp, 20.0)
            seq_log_ratio += torch.sum(log_is_ratio, dim=-1, keepdim=True)
        log_w_seq = torch.clamp(seq_log_ratio, lower_clamp, 20.0)
        w_seq = torch.exp(log_w_seq)
        is_nonneg_adv = advantages >= 0
        k_seq = torch.where(is_nonneg_adv, k_pos, k_neg)
        lambda_seq = torch.where(is_nonneg_adv, lambda_pos, lambda_neg).clamp(min=1e-4)
        log_phi = lambda_seq + k_seq * log_w_seq - lambda_seq * w_seq
        phi_seq = torch.exp(log_phi).nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)
    return phi_seq


def vespo_cases():
    """TRL's vespo loss alone (beta 0, no vLLM correction), 'dapo' aggregation on one process (sum / token count)."""
    out = []
    N, L = 4, 6
    lp = rand(N, L, lo=-3.0, hi=-0.05)
    old = lp + rand(N, L, lo=-0.08, hi=0.08)
    adv = torch.tensor([[1.2], [-0.7], [0.0], [-1.5]])
    mask = torch.tensor([[1] * 6, [1, 1, 1, 1, 0, 0], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]], dtype=torch.float64)
    params = {"k_pos": 2.0, "lambda_pos": 3.0, "k_neg": 3.0, "lambda_neg": 2.0}
    x = lp.clone().requires_grad_(True)
    phi_seq = get_gamma_weights(adv, x - old, mask, None, **params)
    per_token_loss = -phi_seq * adv * x
    loss = (per_token_loss * mask).sum() / mask.sum().clamp(min=1.0)
    loss.backward()
    out.append(
        {
            "params": params,
            "logp": lp.tolist(),
            "old_logp": old.tolist(),
            "advantages": adv.tolist(),
            "mask": mask.tolist(),
            "loss": loss.item(),
            "phi_seq": phi_seq.flatten().tolist(),
            "grad": (x.grad * mask).tolist(),
        }
    )
    return out


# ------------------------------------------------------- prime-rl and verl: the sampler/learner mismatch diagnostics
# Not transcribed: the peers' own functions are read from their git objects and run as written (decorators and
# annotations dropped, since jaxtyping/beartype/torch.compile are not needed to compute), with verl's masked_mean and
# masked_sum from verl/utils/torch_functional.py. Only prime-rl's Tensors.compute_stats (mean, unbiased std, max over
# the concatenated token values) and compute_loss's per-sample loop are restated, in mismatch_cases.

PRIME_RL_COMMIT = "559b44772e471d1538537b8805cc77f3824a5e64"  # PrimeIntellect-ai/prime-rl, 2026-08-21
VERL_DIAG_COMMIT = "b178a3cd56f58b2d502255daba591e92833930a7"  # volcengine/verl, 2026-01-29


def peer_source(env, default_git_dir, commit, path):
    import subprocess

    git_dir = os.environ.get(env, default_git_dir)
    if not os.path.isdir(git_dir):
        sys.exit(f"make-trainer-formula-fixture: set {env} to a git directory of the peer's repository (not found: {git_dir})")
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def peer_functions(source, names, namespace):
    """Defines the named top-level functions of `source` in `namespace`, as written, without decorators or annotations."""
    import ast

    tree = ast.parse(source)
    wanted = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    missing = set(names) - {n.name for n in wanted}
    if missing:
        sys.exit(f"make-trainer-formula-fixture: the peer source lacks {sorted(missing)}")
    for fn in wanted:
        fn.decorator_list = []
        fn.returns = None
        for a in fn.args.args + fn.args.kwonlyargs:
            a.annotation = None
    module = ast.Module(body=wanted, type_ignores=[])
    exec(compile(ast.fix_missing_locations(module), "<peer>", "exec"), namespace)
    return namespace


def mismatch_peers():
    import types
    from typing import Any, Optional

    verl_f = types.SimpleNamespace()
    fns = peer_functions(
        peer_source("VERL_GIT_DIR", "/work/.mirror/volcengine+verl/repo", VERL_DIAG_COMMIT, "verl/utils/torch_functional.py"),
        ["masked_sum", "masked_mean"],
        {"torch": torch},
    )
    verl_f.masked_sum, verl_f.masked_mean = fns["masked_sum"], fns["masked_mean"]
    helper = peer_source(
        "VERL_GIT_DIR", "/work/.mirror/volcengine+verl/repo", VERL_DIAG_COMMIT, "verl/trainer/ppo/rollout_corr_helper.py"
    )
    verl = peer_functions(
        helper,
        ["compute_offpolicy_metrics", "compute_is_metrics", "compute_rollout_correction_weights"],
        {"torch": torch, "math": math, "verl_F": verl_f, "SAFETY_BOUND": 20.0, "Optional": Optional, "Any": Any},
    )
    loss = peer_source(
        "PRIME_RL_GIT_DIR", "/work/.mirror/PrimeIntellect-ai+prime-rl/repo", PRIME_RL_COMMIT, "src/prime_rl/trainer/rl/loss.py"
    )
    prime = peer_functions(
        loss,
        ["_safe_mean", "compute_importance_ratio_and_mismatch_kl", "default_loss_fn"],
        {"torch": torch, "LossOutputs": lambda loss, metrics: types.SimpleNamespace(loss=loss, metrics=metrics)},
    )
    return verl, prime


def mismatch_cases():
    verl, prime = mismatch_peers()
    import types

    out = []
    for N, S, threshold, spread in ((8, 6, 2.0, 1.2), (12, 5, 3.0, 1.5), (5, 7, 3.0, 0.6), (3, 9, 2.0, 0.05)):
        learner = rand(N, S, lo=-2.5, hi=-0.05)
        sampler = (learner + rand(N, S, lo=-spread, hi=spread)).clamp(max=-1e-3)
        lengths = [S] + [int(x) for x in torch.randint(0, S + 1, (N - 1,), generator=gen)]
        lengths[-1] = 0 if N > 3 else lengths[-1]  # an empty row where there are enough rows
        mask = torch.tensor([[1.0 if t < n else 0.0 for t in range(S)] for n in lengths])
        adv_rows = rand(N, 1, lo=-1.5, hi=1.5)
        adv_rows[1 % N] = 0.0
        adv = adv_rows.expand(N, S).clone()
        # verl: the off-policy diagnostics (old_log_prob: the learner's, rollout_log_prob: the sampler's) and the token
        # IS metrics on the untruncated weights (compute_rollout_correction_weights at rollout_is "token").
        off = verl["compute_offpolicy_metrics"](learner, sampler, mask)
        _, is_metrics = verl["compute_rollout_correction_weights"](learner - sampler, mask, "token", threshold, False)
        # prime-rl: mismatch_kl of the loss tokens (train.py), its mean / std / max (Tensors.compute_stats), and the
        # DPPO mask's advantage shares per sample (compute_loss runs default_loss_fn on each), averaged over samples.
        _, _, kl = prime["compute_importance_ratio_and_mismatch_kl"](learner, sampler)
        kl = kl[mask.bool()]
        cfg = types.SimpleNamespace(dppo_mask_low=0.2, dppo_mask_high=0.2, adv_tau=1.0, kl_tau=1e-3)
        per_sample = [
            prime["default_loss_fn"](
                types.SimpleNamespace(
                    trainer_logprobs=learner[i],
                    inference_logprobs=sampler[i],
                    ref_logprobs=None,
                    advantages=adv[i],
                    loss_mask=mask[i].bool(),
                    loss_weights=None,
                ),
                cfg,
            ).metrics
            for i in range(N)
        ]
        out.append(
            {
                "S": S,
                "threshold": threshold,
                "learner_logp": learner.flatten().tolist(),
                "sampler_logp": sampler.flatten().tolist(),
                "mask": mask.flatten().tolist(),
                "advantages": adv.flatten().tolist(),
                "metrics": {
                    "mismatch_kl/mean": kl.mean().item(),
                    "mismatch_kl/std": kl.std().item(),
                    "mismatch_kl/max": kl.max().item(),
                    "rollout_corr/rollout_is_eff_sample_size": is_metrics["rollout_is_eff_sample_size"],
                    "rollout_corr/rollout_is_ratio_fraction_high": is_metrics["rollout_is_ratio_fraction_high"],
                    "rollout_corr/rollout_is_ratio_fraction_low": is_metrics["rollout_is_ratio_fraction_low"],
                    "rollout_corr/ppl_ratio": off["ppl_ratio"],
                    "rollout_corr/chi2_token": off["chi2_token"],
                    "rollout_corr/chi2_seq": off["chi2_seq"],
                    "masked_advantage_positive/mean": torch.stack(
                        [m["masked_advantage_positive"].double() for m in per_sample]
                    ).mean().item(),
                    "masked_advantage_negative/mean": torch.stack(
                        [m["masked_advantage_negative"].double() for m in per_sample]
                    ).mean().item(),
                },
            }
        )
    return out


def main():
    fixture = {
        "what": "cases computed by functions transcribed from verl and TRL; see scripts/make-trainer-formula-fixture.py",
        "sources": {
            "verl": "verl-project/verl@1dda039b9c6311889a9c9a26040677e1254814f9 verl/trainer/ppo/core_algos.py",
            "trl": "huggingface/trl@f2cd57710ae345ea6428ae95363267fcf38a3dc8 trl/trainer/grpo_trainer.py",
        },
        "verl_kl_penalty": verl_kl_cases(),
        "verl_grpo_passk": passk_cases(),
        "verl_policy_loss": verl_loss_cases(),
        "trl_normalize_then_sum": gdpo_cases(),
        "trl_use_bias_correction_kl": bias_kl_cases(),
        "trl_vespo": vespo_cases(),
        "verl_optimal_token_baseline": otb_cases(),  # the cases above keep their random draws
        # Run from the peers' own sources (their git objects), not transcribed: see mismatch_peers.
        "mismatch_diagnostics": {
            "sources": {
                "prime_rl": f"PrimeIntellect-ai/prime-rl@{PRIME_RL_COMMIT} src/prime_rl/trainer/rl/loss.py",
                "verl": f"volcengine/verl@{VERL_DIAG_COMMIT} verl/trainer/ppo/rollout_corr_helper.py",
            },
            "cases": mismatch_cases(),
        },
    }
    path = os.path.join(os.path.dirname(__file__), "..", "src", "reference", "fixtures", "trainer-formulas.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    print(f"wrote {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
