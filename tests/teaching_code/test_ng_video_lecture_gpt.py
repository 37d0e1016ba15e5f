"""Port of Karpathy's "Let's build GPT" lecture code, the full model.

Source: github.com/karpathy/ng-video-lecture, gpt.py (commit 52201428ed7b46804849dea0b3ccf0de9df1a5c3):
token and position Embeddings, causal self-attention heads with a `tril` buffer and masked_fill, a
ModuleList of heads, LayerNorm, a residual Transformer block, `self.apply(self._init_weights)`, AdamW
and multinomial sampling. The program follows the original statement by statement. Changes:
- input.txt (downloaded) -> 20,000 characters of synthetic play-like text;
- sizes shrunk to run in seconds: batch_size 64 -> 16, block_size 256 -> 32, max_iters 5000 -> 40,
  eval_interval 500 -> 20, learning_rate 3e-4 -> 1e-3, eval_iters 200 -> 4, n_embd 384 -> 32,
  n_head 6 -> 4, n_layer 6 -> 2;
- dropout 0.2 -> 0.0 (the two libraries draw different dropout masks; with 0.0 their runs are equal);
- `torch.randint` in get_batch -> NumPy draws wrapped by the library;
- after `_init_weights` (kept), the weights are overwritten with NumPy draws from the same distributions
  (N(0, 0.02), zero biases, LayerNorm ones/zeros), so both libraries start equal;
- generation samples 50 tokens instead of 500 (the libraries' multinomial streams differ: the text is
  checked for its length and alphabet);
- the prints are captured: the parameter count must be the original's formula's value, and the losses at
  steps 0, 20, 39 are held to values recorded from PyTorch 2.13.
"""

from __future__ import annotations

import numpy as np
import teaching_helpers as h

RECORDED = [(4.0172, 4.0130), (3.4563, 3.4933), (3.0852, 3.0988)]  # (train, val) at steps 0, 20, 39


def program(torch, text: str, rng: np.random.Generator):
    nn = torch.nn
    F = torch.nn.functional

    # hyperparameters
    batch_size = 16
    block_size = 32
    max_iters = 40
    eval_interval = 20
    learning_rate = 1e-3
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    eval_iters = 4
    n_embd = 32
    n_head = 4
    n_layer = 2
    dropout = 0.0
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

    class Head(nn.Module):
        """ one head of self-attention """

        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))

            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            k = self.key(x)   # (B,T,hs)
            q = self.query(x)  # (B,T,hs)
            wei = q @ k.transpose(-2, -1) * k.shape[-1]**-0.5  # (B, T, hs) @ (B, hs, T) -> (B, T, T)
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))  # (B, T, T)
            wei = F.softmax(wei, dim=-1)  # (B, T, T)
            wei = self.dropout(wei)
            v = self.value(x)  # (B,T,hs)
            out = wei @ v  # (B, T, T) @ (B, T, hs) -> (B, T, hs)
            return out

    class MultiHeadAttention(nn.Module):
        """ multiple heads of self-attention in parallel """

        def __init__(self, num_heads, head_size):
            super().__init__()
            self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            self.proj = nn.Linear(head_size * num_heads, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            out = torch.cat([h(x) for h in self.heads], dim=-1)
            out = self.dropout(self.proj(out))
            return out

    class FeedFoward(nn.Module):
        """ a simple linear layer followed by a non-linearity """

        def __init__(self, n_embd):
            super().__init__()
            self.net = nn.Sequential(
                nn.Linear(n_embd, 4 * n_embd),
                nn.ReLU(),
                nn.Linear(4 * n_embd, n_embd),
                nn.Dropout(dropout),
            )

        def forward(self, x):
            return self.net(x)

    class Block(nn.Module):
        """ Transformer block: communication followed by computation """

        def __init__(self, n_embd, n_head):
            super().__init__()
            head_size = n_embd // n_head
            self.sa = MultiHeadAttention(n_head, head_size)
            self.ffwd = FeedFoward(n_embd)
            self.ln1 = nn.LayerNorm(n_embd)
            self.ln2 = nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            x = x + self.ffwd(self.ln2(x))
            return x

    class GPTLanguageModel(nn.Module):

        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)  # final layer norm
            self.lm_head = nn.Linear(n_embd, vocab_size)
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            tok_emb = self.token_embedding_table(idx)  # (B,T,C)
            pos_emb = self.position_embedding_table(torch.arange(T, device=device))  # (T,C)
            x = tok_emb + pos_emb  # (B,T,C)
            x = self.blocks(x)  # (B,T,C)
            x = self.ln_f(x)  # (B,T,C)
            logits = self.lm_head(x)  # (B,T,vocab_size)
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
                idx_cond = idx[:, -block_size:]
                logits, loss = self(idx_cond)
                logits = logits[:, -1, :]  # becomes (B, C)
                probs = F.softmax(logits, dim=-1)  # (B, C)
                idx_next = torch.multinomial(probs, num_samples=1)  # (B, 1)
                idx = torch.cat((idx, idx_next), dim=1)  # (B, T+1)
            return idx

    model = GPTLanguageModel()
    m = model.to(device)
    h.numpy_init(torch, model, seed=1337, linear_std=0.02)  # added: the same start in both libraries
    print(sum(p.numel() for p in m.parameters()) / 1e6, 'M parameters')

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)

    for iter in range(max_iters):
        if iter % eval_interval == 0 or iter == max_iters - 1:
            losses = estimate_loss()
            print(f"step {iter}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")

        xb, yb = get_batch('train')

        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    context = torch.zeros((1, 1), dtype=torch.long, device=device)
    sample = m.generate(context, max_new_tokens=50)
    print(decode(sample[0].tolist()))
    return model, sample, chars


def expected_parameter_count(vocab: int, n_embd: int = 32, block: int = 32, n_layer: int = 2) -> int:
    per_block = 3 * n_embd * n_embd + (n_embd * n_embd + n_embd) + (n_embd * 4 * n_embd + 4 * n_embd) + (
        4 * n_embd * n_embd + n_embd) + 4 * n_embd
    return vocab * n_embd + block * n_embd + n_layer * per_block + 2 * n_embd + n_embd * vocab + vocab


def test_gpt_trains_to_the_recorded_losses(lib):
    text = h.synthetic_text(20_000, seed=1)
    out, (model, sample, chars) = h.printed(program, lib, text, np.random.default_rng(1))
    lines = out.splitlines()
    assert lines[0] == f"{expected_parameter_count(len(chars)) / 1e6} M parameters"
    steps = [h.floats_in(line) for line in lines[1:4]]
    assert [line.split(":")[0] for line in lines[1:4]] == ["step 0", "step 20", "step 39"]
    np.testing.assert_allclose(steps, RECORDED, atol=3e-4)
    assert steps[2][1] < steps[0][1] - 0.5
    assert [n for n, _ in model.named_buffers()][:2] == ["blocks.0.sa.heads.0.tril", "blocks.0.sa.heads.1.tril"]
    assert "blocks.0.sa.heads.0.tril" in model.state_dict()
    assert tuple(sample.shape) == (1, 51)
    assert set("\n".join(lines[4:])) <= set(chars)
