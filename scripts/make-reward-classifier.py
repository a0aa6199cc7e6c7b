# Writes the lab's shipped reward classifier, public/models/sentiment-char/: a tiny character-level sentiment
# model (embedding, one convolution, masked max-pool, linear head) trained on synthetic reviews, exported to ONNX
# so transformers.js's text-classification pipeline runs it (Node: onnxruntime-node; the page: WASM or WebGPU).
# Also writes src/io/fixtures/sentiment-char.json: texts and the logits PyTorch gives, which the tests compare
# with transformers.js's. Run with Debian's interpreter: /usr/bin/python3 scripts/make-reward-classifier.py
import json
import os
import random
import shutil
import sys

try:
    import torch
except ImportError:
    sys.exit("torch is missing: run this with Debian's /usr/bin/python3 after `apt-get install -y python3-torch`")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "public", "models", "sentiment-char")
FIXTURE = os.path.join(ROOT, "src", "model", "fixtures", "sentiment-char.json")
CHAR_TOKENIZER = os.path.join(ROOT, "public", "tokenizers", "char", "tokenizer.json")

POSITIVE = ["good", "great", "love", "nice", "fun", "happy", "kind", "joy", "best", "fine", "cool", "wow", "glad", "sweet"]
NEGATIVE = ["bad", "sad", "hate", "awful", "poor", "ugly", "dull", "worst", "boring", "mean", "sick", "angry", "meh", "grim"]
FILLER = ["the", "a", "it", "was", "is", "so", "very", "film", "day", "food", "show", "book", "this", "and", "my", "too"]
MAX_CHARS = 64


def review(rng, words):
    parts = [rng.choice(FILLER) for _ in range(rng.randint(1, 4))]
    for w in words:
        parts.insert(rng.randint(0, len(parts)), w)
    return " ".join(parts)[:MAX_CHARS]


def dataset(rng, n):
    rows = []
    for _ in range(n):
        label = rng.randint(0, 1)
        lexicon = POSITIVE if label == 1 else NEGATIVE
        words = [rng.choice(lexicon) for _ in range(rng.randint(1, 2))]
        rows.append((review(rng, words), label))
    return rows


class CharSentiment(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, 16)
        self.conv = torch.nn.Conv1d(16, 32, kernel_size=4, padding=3)
        self.head = torch.nn.Linear(32, 2)

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids).transpose(1, 2)  # [B, C, T]
        h = torch.relu(self.conv(x))[:, :, : input_ids.shape[1]]  # causal-padded, cut back to T
        keep = attention_mask.unsqueeze(1).to(h.dtype)
        h = h * keep - (1.0 - keep) * 1e4  # padding never wins the max
        pooled = h.max(dim=2).values
        return self.head(pooled)


def main():
    with open(CHAR_TOKENIZER) as f:
        tok = json.load(f)
    vocab = tok["model"]["vocab"]
    pad_id = vocab["<pad>"]

    def encode(texts):
        ids = [[vocab[c] for c in t] for t in texts]
        width = max(1, max(len(r) for r in ids))
        input_ids = torch.tensor([r + [pad_id] * (width - len(r)) for r in ids], dtype=torch.long)
        mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in ids], dtype=torch.long)
        return input_ids, mask

    torch.manual_seed(0)
    rng = random.Random(0)
    train, test = dataset(rng, 4000), dataset(rng, 400)
    model = CharSentiment(len(vocab))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(6):
        rng.shuffle(train)
        for i in range(0, len(train), 64):
            batch = train[i : i + 64]
            ids, mask = encode([t for t, _ in batch])
            loss = torch.nn.functional.cross_entropy(model(ids, mask), torch.tensor([y for _, y in batch]))
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        ids, mask = encode([t for t, _ in test])
        acc = (model(ids, mask).argmax(1) == torch.tensor([y for _, y in test])).float().mean().item()
    print(f"held-out accuracy on {len(test)} synthetic reviews: {acc:.3f}")

    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(os.path.join(OUT, "onnx"))
    ids, mask = encode(["a good day", "bad"])
    torch.onnx.export(
        model, (ids, mask), os.path.join(OUT, "onnx", "model.onnx"),
        input_names=["input_ids", "attention_mask"], output_names=["logits"],
        dynamic_axes={"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}, "logits": {0: "batch"}},
        opset_version=14,
    )
    config = {
        "architectures": ["CharSentimentForSequenceClassification"],
        "model_type": "bert",
        "id2label": {"0": "NEGATIVE", "1": "POSITIVE"},
        "label2id": {"NEGATIVE": 0, "POSITIVE": 1},
        "vocab_size": len(vocab),
        "max_position_embeddings": MAX_CHARS,
        "problem_type": "single_label_classification",
        "rl_lab": {
            "what": "character-level sentiment classifier trained on synthetic reviews by scripts/make-reward-classifier.py",
            "held_out_accuracy": round(acc, 4),
            "positive_words": POSITIVE,
            "negative_words": NEGATIVE,
        },
    }
    with open(os.path.join(OUT, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    shutil.copy(CHAR_TOKENIZER, os.path.join(OUT, "tokenizer.json"))
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "pad_token": "<pad>", "unk_token": "<unk>", "bos_token": "<bos>", "eos_token": "<eos>",
        "model_max_length": MAX_CHARS, "clean_up_tokenization_spaces": False,
    }
    with open(os.path.join(OUT, "tokenizer_config.json"), "w") as f:
        json.dump(tokenizer_config, f, indent=2)
        f.write("\n")

    probe = ["a good day", "the worst film", "happy happy joy", "it was so dull and sad", "qzx", "love it", "b"]
    with torch.no_grad():
        ids, mask = encode(probe)
        logits = model(ids, mask).tolist()
    os.makedirs(os.path.dirname(FIXTURE), exist_ok=True)
    with open(FIXTURE, "w") as f:
        json.dump({"what": "PyTorch logits of public/models/sentiment-char for these texts (labels NEGATIVE, POSITIVE)",
                   "texts": probe, "logits": [[round(v, 6) for v in row] for row in logits]}, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT} ({os.path.getsize(os.path.join(OUT, 'onnx', 'model.onnx'))} bytes of ONNX) and {FIXTURE}")


if __name__ == "__main__":
    main()
