"""Port of Karpathy's nanoGPT model, the GPT most learners train after "Let's build GPT".

Source: github.com/karpathy/nanoGPT, model.py (commit 3adf61e1): a LayerNorm with optional bias over
F.layer_norm, CausalSelfAttention over F.scaled_dot_product_attention(is_causal=True) with one packed c_attn
projection split into heads, an MLP with nn.GELU, nn.ModuleDict / nn.ModuleList, weight tying
(`wte.weight = lm_head.weight`), `self.apply(self._init_weights)` and GPT-2's scaled init of c_proj,
cross_entropy with ignore_index=-1, `configure_optimizers` (AdamW with two parameter groups, and
`inspect.signature(torch.optim.AdamW)`), `generate` with temperature and top-k (topk, a boolean-mask write
`logits[logits < v[:, [-1]]] = -inf`, multinomial), `crop_block_size` (a Parameter re-made from a slice).
The classes are the original's, statement by statement, inside `program`. Changes:
- the config is tiny (block_size 16, vocab of the synthetic text, n_layer 2, n_head 4, n_embd 32,
  dropout 0.0) and `bias` is a parameter (the test runs True and False);
- `from_pretrained` (downloads GPT-2 with transformers) and `estimate_mfu` (A100 figures) are left out;
- after the original init (kept), the parameters are overwritten with NumPy draws from the same
  distributions (N(0, 0.02), c_proj N(0, 0.02/sqrt(2 n_layer)), zero biases, LayerNorm ones), so both
  libraries start equal;
- a 25-step training loop stands in for train.py (which needs CUDA/DDP/GradScaler set-up): batches drawn
  with NumPy from a synthetic text, AdamW from `configure_optimizers(0.1, 1e-3, (0.9, 0.95), 'cpu')`;
- the printed parameter counts are checked, and the losses at steps 0, 12, 24 are held to values recorded
  from PyTorch 2.13; generation (the libraries' multinomial streams differ) is checked for its length and
  alphabet, and top-k for keeping only the k best tokens.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np
import pytest
import teaching_helpers as h

RECORDED = {True: [4.017439, 3.764092, 3.511140], False: [4.017439, 3.769513, 3.529120]}  # steps 0, 12, 24


def program(torch, text: str, bias: bool, rng: np.random.Generator):
    nn = torch.nn
    F = torch.nn.functional

    class LayerNorm(nn.Module):
        """ LayerNorm but with an optional bias. PyTorch doesn't support simply bias=False """

        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(ndim))
            self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

        def forward(self, input):
            return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):

        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            # key, query, value projections for all heads, but in a batch
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
            # output projection
            self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
            # regularization
            self.attn_dropout = nn.Dropout(config.dropout)
            self.resid_dropout = nn.Dropout(config.dropout)
            self.n_head = config.n_head
            self.n_embd = config.n_embd
            self.dropout = config.dropout
            # flash attention make GPU go brrrrr but support is only in PyTorch >= 2.0
            self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
            if not self.flash:
                print("WARNING: using slow attention. Flash Attention requires PyTorch >= 2.0")
                # causal mask to ensure that attention is only applied to the left in the input sequence
                self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                     .view(1, 1, config.block_size, config.block_size))

        def forward(self, x):
            B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (n_embd)

            # calculate query, key, values for all heads in batch and move head forward to be the batch dim
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)

            # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
            if self.flash:
                # efficient attention using Flash Attention CUDA kernels
                y = torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True)
            else:
                # manual implementation of attention
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
                att = F.softmax(att, dim=-1)
                att = self.attn_dropout(att)
                y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
            y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs side by side

            # output projection
            y = self.resid_dropout(self.c_proj(y))
            return y

    class MLP(nn.Module):

        def __init__(self, config):
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
            self.dropout = nn.Dropout(config.dropout)

        def forward(self, x):
            x = self.c_fc(x)
            x = self.gelu(x)
            x = self.c_proj(x)
            x = self.dropout(x)
            return x

    class Block(nn.Module):

        def __init__(self, config):
            super().__init__()
            self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
            self.mlp = MLP(config)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            x = x + self.mlp(self.ln_2(x))
            return x

    @dataclass
    class GPTConfig:
        block_size: int = 1024
        vocab_size: int = 50304  # GPT-2 vocab_size of 50257, padded up to nearest multiple of 64 for efficiency
        n_layer: int = 12
        n_head: int = 12
        n_embd: int = 768
        dropout: float = 0.0
        bias: bool = True  # True: bias in Linears and LayerNorms, like GPT-2. False: a bit better and faster

    class GPT(nn.Module):

        def __init__(self, config):
            super().__init__()
            assert config.vocab_size is not None
            assert config.block_size is not None
            self.config = config

            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=LayerNorm(config.n_embd, bias=config.bias),
            ))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # https://paperswithcode.com/method/weight-tying

            # init all weights
            self.apply(self._init_weights)
            # apply special scaled init to the residual projections, per GPT-2 paper
            for pn, p in self.named_parameters():
                if pn.endswith('c_proj.weight'):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

            # report number of parameters
            print("number of parameters: %.2fM" % (self.get_num_params() / 1e6,))

        def get_num_params(self, non_embedding=True):
            n_params = sum(p.numel() for p in self.parameters())
            if non_embedding:
                n_params -= self.transformer.wpe.weight.numel()
            return n_params

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            device = idx.device
            b, t = idx.size()
            assert t <= self.config.block_size, \
                f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"
            pos = torch.arange(0, t, dtype=torch.long, device=device)  # shape (t)

            # forward the GPT model itself
            tok_emb = self.transformer.wte(idx)  # token embeddings of shape (b, t, n_embd)
            pos_emb = self.transformer.wpe(pos)  # position embeddings of shape (t, n_embd)
            x = self.transformer.drop(tok_emb + pos_emb)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)

            if targets is not None:
                # if we are given some desired targets also calculate the loss
                logits = self.lm_head(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            else:
                # inference-time mini-optimization: only forward the lm_head on the very last position
                logits = self.lm_head(x[:, [-1], :])  # note: using list [-1] to preserve the time dim
                loss = None

            return logits, loss

        def crop_block_size(self, block_size):
            # model surgery to decrease the block size if necessary
            assert block_size <= self.config.block_size
            self.config.block_size = block_size
            self.transformer.wpe.weight = nn.Parameter(self.transformer.wpe.weight[:block_size])
            for block in self.transformer.h:
                if hasattr(block.attn, 'bias'):
                    block.attn.bias = block.attn.bias[:, :, :block_size, :block_size]

        def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
            # start with all of the candidate parameters
            param_dict = {pn: p for pn, p in self.named_parameters()}
            # filter out those that do not require grad
            param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
            # create optim groups. Any parameters that is 2D will be weight decayed, otherwise no.
            # i.e. all weight tensors in matmuls + embeddings decay, all biases and layernorms don't.
            decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
            optim_groups = [
                {'params': decay_params, 'weight_decay': weight_decay},
                {'params': nodecay_params, 'weight_decay': 0.0}
            ]
            num_decay_params = sum(p.numel() for p in decay_params)
            num_nodecay_params = sum(p.numel() for p in nodecay_params)
            print(f"num decayed parameter tensors: {len(decay_params)}, with {num_decay_params:,} parameters")
            print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with {num_nodecay_params:,} parameters")
            # Create AdamW optimizer and use the fused version if it is available
            fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
            use_fused = fused_available and device_type == 'cuda'
            extra_args = dict(fused=True) if use_fused else dict()
            optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
            print(f"using fused AdamW: {use_fused}")

            return optimizer

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
            for _ in range(max_new_tokens):
                # if the sequence context is growing too long we must crop it at block_size
                idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
                # forward the model to get the logits for the index in the sequence
                logits, _ = self(idx_cond)
                # pluck the logits at the final step and scale by desired temperature
                logits = logits[:, -1, :] / temperature
                # optionally crop the logits to only the top k options
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float('Inf')
                # apply softmax to convert logits to (normalized) probabilities
                probs = F.softmax(logits, dim=-1)
                # sample from the distribution
                idx_next = torch.multinomial(probs, num_samples=1)
                # append sampled index to the running sequence and continue
                idx = torch.cat((idx, idx_next), dim=1)

            return idx

    # -- the test's driver (train.py's loop, shrunk) ---------------------------------------------------------------
    chars = sorted(set(text))
    data = np.array([chars.index(c) for c in text])
    config = GPTConfig(block_size=16, vocab_size=len(chars), n_layer=2, n_head=4, n_embd=32, dropout=0.0, bias=bias)
    torch.manual_seed(1337)
    model = GPT(config)
    with torch.no_grad():  # added: NumPy draws from the original's distributions, the same in both libraries
        for pn, p in model.named_parameters():
            if pn.endswith('c_proj.weight'):
                values = rng.standard_normal(tuple(p.shape)) * 0.02 / math.sqrt(2 * config.n_layer)
            elif p.dim() >= 2:
                values = rng.standard_normal(tuple(p.shape)) * 0.02
            elif 'ln' in pn and pn.endswith('weight'):
                values = np.ones(tuple(p.shape))
            else:
                values = np.zeros(tuple(p.shape))
            p.copy_(torch.tensor(values.astype(np.float32)))
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), 'cpu')
    losses = []
    for it in range(25):
        ix = rng.integers(0, len(data) - config.block_size, 8)
        x = torch.tensor(np.stack([data[i:i + config.block_size] for i in ix]))
        y = torch.tensor(np.stack([data[i + 1:i + 1 + config.block_size] for i in ix]))
        logits, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    top_k = 3
    logits, _ = model(torch.zeros((2, 1), dtype=torch.long))
    sample = model.generate(torch.zeros((2, 1), dtype=torch.long), max_new_tokens=20, top_k=top_k)
    model.crop_block_size(8)
    short_logits, _ = model(torch.zeros((1, 8), dtype=torch.long))
    return model, losses, logits, sample, short_logits, chars


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no bias"])
def test_nanogpt_trains_to_the_recorded_losses(lib, bias):
    text = h.synthetic_text(5_000, seed=3)
    out, (model, losses, logits, sample, short_logits, chars) = h.printed(program, lib, text, bias,
                                                                          np.random.default_rng(5))
    lines = out.splitlines()
    n, e, layers = len(chars), 32, 2
    decayed = n * e + 16 * e + layers * 12 * e * e  # wte (tied with lm_head), wpe, and 4 matrices per block
    no_decay = layers * 13 * e + 2 * e if bias else layers * 2 * e + e  # biases and LayerNorms
    assert lines[0] == "number of parameters: %.2fM" % ((decayed + no_decay - 16 * e) / 1e6)
    assert lines[1] == f"num decayed parameter tensors: {2 + 4 * layers}, with {decayed:,} parameters"
    assert lines[2] == (f"num non-decayed parameter tensors: {8 * layers + 2 if bias else 2 * layers + 1}, "
                        f"with {no_decay:,} parameters")
    assert lines[3] == "using fused AdamW: False"
    assert len(model.transformer.wpe.weight) == 8 and model.transformer.wte.weight is model.lm_head.weight
    np.testing.assert_allclose([losses[0], losses[12], losses[24]], RECORDED[bias], atol=2e-5)
    assert losses[24] < losses[0] - 0.4
    assert tuple(logits.shape) == (2, 1, n) and tuple(short_logits.shape) == (1, 1, n)
    assert tuple(sample.shape) == (2, 21) and int(sample.max()) < n
    best = set(np.argsort(-logits[0, -1].detach().numpy())[:3].tolist())  # top-k: the first draw is a best 3
    assert int(sample[0, 1]) in best and int(sample[1, 1]) in best
