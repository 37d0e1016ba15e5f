"""Port of Karpathy's "Let's build GPT" lecture code, the bigram baseline.

Source: github.com/karpathy/ng-video-lecture, bigram.py (commit 52201428ed7b46804849dea0b3ccf0de9df1a5c3).
The program below follows the original statement by statement; `torch` is the library under test.
Changes, all forced by running in seconds, offline and identically in two libraries:
- input.txt (tiny-shakespeare, downloaded with wget) -> 20,000 characters of synthetic play-like text;
- max_iters 3000 -> 300, eval_interval 300 -> 100, eval_iters 200 -> 20;
- `torch.randint` in get_batch -> NumPy draws wrapped by the library (same batches in both libraries);
- the Embedding table, drawn by PyTorch's init, is overwritten with NumPy N(0, 1) draws (same start);
- generation samples 100 tokens instead of 500 (torch.multinomial's stream differs between libraries,
  so the text is checked for its length and alphabet, not its letters);
- the prints are captured: the losses printed at steps 0, 100, 200 are held to values recorded from
  PyTorch 2.13, and must fall.
"""

from __future__ import annotations

import numpy as np
import teaching_helpers as h

RECORDED = [(4.4078, 4.4538), (3.2275, 3.2435), (2.4933, 2.5222)]  # (train, val) at steps 0, 100, 200


def program(torch, text: str, rng: np.random.Generator):
    import_nn = torch.nn
    nn = import_nn
    F = torch.nn.functional

    # hyperparameters
    batch_size = 32
    block_size = 8
    max_iters = 300
    eval_interval = 100
    learning_rate = 1e-2
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    eval_iters = 20
    # ------------

    torch.manual_seed(1337)

    chars = sorted(list(set(text)))
    vocab_size = len(chars)
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    encode = lambda s: [stoi[c] for c in s]  # noqa: E731
    decode = lambda l: ''.join([itos[i] for i in l])  # noqa: E731

    data = torch.tensor(encode(text), dtype=torch.long)
    n = int(0.9 * len(data))
    train_data = data[:n]
    val_data = data[n:]

    def get_batch(split):
        data = train_data if split == 'train' else val_data
        ix = torch.tensor(rng.integers(0, len(data) - block_size, (batch_size,)))  # was torch.randint
        x = torch.stack([data[i:i + block_size] for i in ix])
        y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
        x, y = x.to(device), y.to(device)
        return x, y

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ['train', 'val']:
            losses = torch.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    class BigramLanguageModel(nn.Module):

        def __init__(self, vocab_size):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

        def forward(self, idx, targets=None):
            logits = self.token_embedding_table(idx)  # (B,T,C)
            if targets is None:
                loss = None
            else:
                B, T, C = logits.shape
                logits = logits.view(B * T, C)
                targets = targets.view(B * T)
                loss = F.cross_entropy(logits, targets)
            return logits, loss

        def generate(self, idx, max_new_tokens):
            for _ in range(max_new_tokens):
                logits, loss = self(idx)
                logits = logits[:, -1, :]  # becomes (B, C)
                probs = F.softmax(logits, dim=-1)  # (B, C)
                idx_next = torch.multinomial(probs, num_samples=1)  # (B, 1)
                idx = torch.cat((idx, idx_next), dim=1)  # (B, T+1)
            return idx

    model = BigramLanguageModel(vocab_size)
    m = model.to(device)
    h.numpy_init(torch, model, seed=1337)  # added: the same start in both libraries

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)

    for iter in range(max_iters):
        if iter % eval_interval == 0:
            losses = estimate_loss()
            print(f"step {iter}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")

        xb, yb = get_batch('train')

        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    context = torch.zeros((1, 1), dtype=torch.long, device=device)
    sample = m.generate(context, max_new_tokens=100)
    print(decode(sample[0].tolist()))
    return sample, chars


def test_bigram_language_model_trains_to_the_recorded_losses(lib):
    text = h.synthetic_text(20_000, seed=0)
    out, (sample, chars) = h.printed(program, lib, text, np.random.default_rng(0))
    lines = out.splitlines()
    steps = [h.floats_in(line) for line in lines[:3]]
    assert [line.split(":")[0] for line in lines[:3]] == ["step 0", "step 100", "step 200"]
    np.testing.assert_allclose(steps, RECORDED, atol=2e-4)
    assert steps[2][1] < steps[0][1] - 1.5  # the validation loss falls a long way
    assert tuple(sample.shape) == (1, 101) and str(sample.dtype).endswith("int64")
    generated = "\n".join(lines[3:])
    assert len(generated) == 101 - 1 + 1 and set(generated) <= set(chars)  # 101 characters, the first is the '\n'
