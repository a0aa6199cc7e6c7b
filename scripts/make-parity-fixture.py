#!/usr/bin/python3
"""Writes public/fixtures/llama-parity.safetensors: a tiny Llama (Hugging Face LlamaForCausalLM architecture,
re-implemented here in plain torch: no `transformers` package), its inputs, and PyTorch's logits, loss and
every parameter gradient. src/reference/parity.test.ts checks the CPU reference model against it; the GPU
model's parity test can load the same file. CI never runs this script; the fixture is committed.

Run with Debian's interpreter (the `python3` on PATH has no torch):
    /usr/bin/python3 scripts/make-parity-fixture.py

Precision: weights are drawn in float32 and stored as F32 (exactly), then the whole computation runs in
float64 on those exact values, and every expected tensor (logits, loss, grads) is stored as F64. An f32
implementation that loads the F32 weights should therefore match to ~1e-6 relative; tests assert 1e-4.

Targets: explicit per-position next-token targets, input.targets[b, t] = tokens[b, t + 1] for t < T - 1 and
-100 (HF's ignore_index) at the last position. The loss is the mean cross-entropy over positions whose target
is not -100, i.e. exactly LlamaForCausalLM(input_ids=tokens, labels=tokens).loss.
"""

import json
import math
import os
import struct
import sys

try:
    import torch
except ImportError as e:  # pragma: no cover
    sys.exit(
        f"make-parity-fixture: `import torch` failed ({e}).\n"
        "Run this script with Debian's interpreter, /usr/bin/python3, after `apt-get install -y python3-torch`\n"
        "(the `python3` first on PATH is a separate interpreter without torch)."
    )

CONFIG = {
    "vocab_size": 37,
    "hidden_size": 16,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 4,
    "intermediate_size": 40,
    "rope_theta": 10000.0,
    "rms_norm_eps": 1e-5,
    "tie_word_embeddings": True,
}
B, T = 2, 7
SEED = 1234
STD = 0.3
IGNORE = -100
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "public", "fixtures", "llama-parity.safetensors")


def param_shapes(c):
    C, V, F = c["hidden_size"], c["vocab_size"], c["intermediate_size"]
    HD, NH, NKV = c["head_dim"], c["num_attention_heads"], c["num_key_value_heads"]
    shapes = [("model.embed_tokens.weight", (V, C))]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes += [
            (p + "input_layernorm.weight", (C,)),
            (p + "self_attn.q_proj.weight", (NH * HD, C)),
            (p + "self_attn.k_proj.weight", (NKV * HD, C)),
            (p + "self_attn.v_proj.weight", (NKV * HD, C)),
            (p + "self_attn.o_proj.weight", (C, NH * HD)),
            (p + "post_attention_layernorm.weight", (C,)),
            (p + "mlp.gate_proj.weight", (F, C)),
            (p + "mlp.up_proj.weight", (F, C)),
            (p + "mlp.down_proj.weight", (C, F)),
        ]
    shapes.append(("model.norm.weight", (C,)))
    if not c["tie_word_embeddings"]:
        shapes.append(("lm_head.weight", (V, C)))
    return shapes


# ---- the model, following transformers' modeling_llama.py --------------------------------------------------


def rms_norm(x, w, eps):
    variance = x.pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(variance + eps))


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rope_cos_sin(T, HD, theta, dtype):
    inv_freq = 1.0 / (theta ** (torch.arange(0, HD, 2, dtype=torch.int64).to(dtype) / HD))
    pos = torch.arange(T, dtype=dtype)
    freqs = torch.outer(pos, inv_freq)  # (T, HD/2)
    emb = torch.cat((freqs, freqs), dim=-1)  # (T, HD)
    return emb.cos(), emb.sin()


def forward(c, P, tokens):
    Bn, Tn = tokens.shape
    C, NH, NKV, HD = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    eps = c["rms_norm_eps"]
    x = P["model.embed_tokens.weight"][tokens]  # (B,T,C)
    cos, sin = rope_cos_sin(Tn, HD, c["rope_theta"], x.dtype)
    mask = torch.triu(torch.ones(Tn, Tn, dtype=torch.bool), diagonal=1)  # True above the diagonal = future
    n_rep = NH // NKV
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h1 = rms_norm(x, P[p + "input_layernorm.weight"], eps)
        q = (h1 @ P[p + "self_attn.q_proj.weight"].T).view(Bn, Tn, NH, HD).transpose(1, 2)  # (B,NH,T,HD)
        k = (h1 @ P[p + "self_attn.k_proj.weight"].T).view(Bn, Tn, NKV, HD).transpose(1, 2)
        v = (h1 @ P[p + "self_attn.v_proj.weight"].T).view(Bn, Tn, NKV, HD).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # repeat_kv: kv head j serves query heads j*n_rep .. j*n_rep + n_rep - 1
        k = k[:, :, None].expand(Bn, NKV, n_rep, Tn, HD).reshape(Bn, NH, Tn, HD)
        v = v[:, :, None].expand(Bn, NKV, n_rep, Tn, HD).reshape(Bn, NH, Tn, HD)
        scores = (q @ k.transpose(2, 3)) / math.sqrt(HD)
        scores = scores.masked_fill(mask, float("-inf"))
        att = torch.softmax(scores, dim=-1) @ v  # (B,NH,T,HD)
        att = att.transpose(1, 2).reshape(Bn, Tn, NH * HD)
        x = x + att @ P[p + "self_attn.o_proj.weight"].T
        h2 = rms_norm(x, P[p + "post_attention_layernorm.weight"], eps)
        gate = h2 @ P[p + "mlp.gate_proj.weight"].T
        up = h2 @ P[p + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * up) @ P[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, P["model.norm.weight"], eps)
    lm = P["model.embed_tokens.weight"] if c["tie_word_embeddings"] else P["lm_head.weight"]
    return x @ lm.T  # (B,T,V)


# ---- a hand-written safetensors writer ---------------------------------------------------------------------

DTYPES = {torch.float64: ("F64", "<d"), torch.float32: ("F32", "<f"), torch.int32: ("I32", "<i")}


def write_safetensors(path, tensors, metadata):
    """tensors: list of (name, tensor), written in this order. F64 first keeps every offset 8-byte aligned."""
    header = {"__metadata__": metadata}
    blobs = []
    offset = 0
    for name, t in tensors:
        dtype, fmt = DTYPES[t.dtype]
        flat = t.detach().contiguous().view(-1).tolist()
        blob = struct.pack("<%d%s" % (len(flat), fmt[1]), *flat)
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)  # pad with spaces so the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for blob in blobs:
            f.write(blob)


def main():
    c = CONFIG
    assert c["hidden_size"] == c["num_attention_heads"] * c["head_dim"]
    g = torch.Generator().manual_seed(SEED)
    params32 = {}
    for name, shape in param_shapes(c):
        if len(shape) == 1:  # norm gains near 1, not exactly 1, so their gradients are exercised
            params32[name] = 1.0 + 0.1 * torch.randn(shape, generator=g, dtype=torch.float32)
        else:
            params32[name] = STD * torch.randn(shape, generator=g, dtype=torch.float32)
    tokens = torch.randint(0, c["vocab_size"], (B, T), generator=g, dtype=torch.int64)
    targets = torch.full((B, T), IGNORE, dtype=torch.int64)
    targets[:, :-1] = tokens[:, 1:]

    P = {k: v.to(torch.float64).requires_grad_(True) for k, v in params32.items()}
    logits = forward(c, P, tokens)
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, c["vocab_size"]), targets.reshape(-1), ignore_index=IGNORE, reduction="mean"
    )
    loss.backward()

    f64 = [("expected.logits", logits.detach()), ("expected.loss", loss.detach().reshape(1))]
    f64 += [("grad." + name, P[name].grad) for name, _ in param_shapes(c)]
    f32 = [(name, params32[name]) for name, _ in param_shapes(c)]
    i32 = [("input.tokens", tokens.to(torch.int32)), ("input.targets", targets.to(torch.int32))]
    metadata = {
        "format": "pt",
        "description": "RL Lab Llama parity fixture: weights (F32), inputs (I32), PyTorch float64 logits/loss/grads (F64)",
        "config": json.dumps(c),
        "batch": json.dumps({"B": B, "T": T}),
        "targets": "input.targets[b,t] = tokens[b,t+1]; -100 (ignored) at t = T-1; loss = mean CE over non-ignored",
        "generator": f"scripts/make-parity-fixture.py, torch {torch.__version__}, seed {SEED}, weight std {STD}",
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    write_safetensors(OUT, f64 + f32 + i32, metadata)
    print(f"wrote {os.path.relpath(OUT)}: {os.path.getsize(OUT)} bytes, loss {loss.item():.6f}, "
          f"logits std {logits.std().item():.3f}")


if __name__ == "__main__":
    main()
