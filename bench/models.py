"""W8 and W9: a training step of two teaching models, minigrad against torch (float32, one thread).

W8  a LeNet-sized CNN: batch 64 of 1x28x28, two conv(5x5)+ReLU+max-pool(2) blocks (6 and 16 channels), two
    Linear layers (400 -> 120 -> 10), cross-entropy, an SGD step.
W9  one step of Karpathy's small GPT (ng-video-lecture gpt.py: per-head Linear key/query/value, a `tril`
    mask, masked_fill, softmax; LayerNorm, residual blocks) with block size 32, 4 heads, 4 layers, embedding
    64, batch 16, vocabulary 65; cross-entropy, an AdamW step.

Both libraries build the same model from the same NumPy weights and data; before timing, the first step's
loss and every gradient of minigrad are checked against torch's (relative to each array's norm, 1e-4: float32).
Each library then runs `--steps` steps per sample, the two taking turns, `--repeats` samples; the figure is
the median time per step, and the ratio minigrad / torch (the issue's gates: W8 <= 2.0, W9 <= 1.5). The last
columns are each library's minor page faults per timed step (where the `resource` module exists): a step that
needs more heap than glibc keeps between steps gets its pages from the system anew every step, which can cost
as much as the arithmetic (see bench/README.md).

    .venv/bin/python bench/models.py                 # both workloads, 3 samples
    .venv/bin/python bench/models.py --only W9 --repeats 5
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import statistics
import time

try:
    import resource  # (Unix only: the page-fault columns)
except ImportError:
    resource = None

import numpy as np

GATES = {"W8": 2.0, "W9": 1.5}


# -- W8: a LeNet-sized CNN --------------------------------------------------------------------------------------
def lenet(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 10))


def w8_data(rng):
    return rng.standard_normal((64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 64)


def w8_step(lib, model, opt, x, y):
    loss = lib.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


# -- W9: the lecture's GPT -------------------------------------------------------------------------------------
def gpt(lib, vocab=65, n_embd=64, n_head=4, n_layer=4, block=32):
    nn, F = lib.nn, lib.nn.functional

    class Head(nn.Module):
        def __init__(self, size):
            super().__init__()
            self.key = nn.Linear(n_embd, size, bias=False)
            self.query = nn.Linear(n_embd, size, bias=False)
            self.value = nn.Linear(n_embd, size, bias=False)
            self.register_buffer("tril", lib.tril(lib.ones(block, block)))

        def forward(self, x):
            T = x.shape[1]
            k, q = self.key(x), self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = F.softmax(wei.masked_fill(self.tril[:T, :T] == 0, float("-inf")), dim=-1)
            return wei @ self.value(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleList([Head(n_embd // n_head) for _ in range(n_head)])
            self.proj = nn.Linear(n_embd, n_embd)
            self.ffwd = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd))
            self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.proj(lib.cat([h(self.ln1(x)) for h in self.heads], dim=-1))
            return x + self.ffwd(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, n_embd)
            self.pos = nn.Embedding(block, n_embd)
            self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab)

        def forward(self, idx, targets):
            B, T = idx.shape
            x = self.tok(idx) + self.pos(lib.arange(T))
            logits = self.lm_head(self.ln_f(self.blocks(x)))
            return F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))

    return GPT()


def w9_data(rng):
    return rng.integers(0, 65, (16, 32)), rng.integers(0, 65, (16, 32))


def w9_step(lib, model, opt, x, y):
    loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


WORKLOADS = {
    "W8": (lenet, w8_data, w8_step, lambda lib, params: lib.optim.SGD(params, lr=0.01, momentum=0.9)),
    "W9": (gpt, w9_data, w9_step, lambda lib, params: lib.optim.AdamW(params, lr=1e-3)),
}


# -- running ----------------------------------------------------------------------------------------------------
def build(lib, wid: str, weights: list[np.ndarray] | None, rng):
    make, data, step, optimizer = WORKLOADS[wid]
    lib.manual_seed(0)
    model = make(lib)
    params = list(model.parameters())
    if weights is None:
        weights = [rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.1 for p in params]
    with lib.no_grad():
        for p, w in zip(params, weights):
            p.copy_(lib.tensor(w))
    return model, optimizer(lib, params), weights


def check(libs: dict, wid: str) -> None:
    """minigrad's first loss and gradients against torch's, from the same weights and data."""
    _, data, step, _ = WORKLOADS[wid]
    rng = np.random.default_rng(1)
    x, y = data(rng)
    weights, got = None, {}
    for name, lib in libs.items():
        model, opt, weights = build(lib, wid, weights, rng)
        loss = step(lib, model, opt, lib.tensor(x), lib.tensor(y))
        got[name] = [loss.item()] + [p.grad.numpy().astype(np.float64) for p in model.parameters()]
    for a, b in zip(got["minigrad"], got["torch"]):
        err = np.linalg.norm(np.asarray(a) - b) / max(np.linalg.norm(b), 1e-12)
        if err > 1e-4:
            raise AssertionError(f"{wid}: minigrad differs from torch (relative error {err:.2e})")


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt if resource else 0


def timed(libs: dict, wid: str, steps: int, repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median ms per step of each library, and its minor page faults per step."""
    _, data, step, _ = WORKLOADS[wid]
    rng = np.random.default_rng(2)
    x, y = data(rng)
    weights, runs = None, {}
    for name, lib in libs.items():
        model, opt, weights = build(lib, wid, weights, rng)
        runs[name] = (lib, model, opt, lib.tensor(x), lib.tensor(y))
        step(lib, model, opt, runs[name][3], runs[name][4])  # warm-up
    samples: dict[str, list[float]] = {name: [] for name in libs}
    faults = dict.fromkeys(libs, 0)
    for _ in range(repeats):
        for name, (lib, model, opt, xt, yt) in runs.items():
            f0, t0 = _faults(), time.process_time()
            for _ in range(steps):
                step(lib, model, opt, xt, yt)
            samples[name].append((time.process_time() - t0) / steps * 1e3)
            faults[name] += _faults() - f0
    return ({name: statistics.median(s) for name, s in samples.items()},
            {name: f / (repeats * steps) for name, f in faults.items()})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", default="W8,W9")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=5)
    args = p.parse_args()
    try:
        libs = {name: importlib.import_module(name) for name in ("minigrad", "torch")}
    except ImportError as e:
        print(f"W8/W9 skipped: {e} (`make torch` installs torch 2.13.0)")
        return
    libs["torch"].set_num_threads(1)
    try:
        import threadpoolctl  # (the lab extra has it: NumPy's BLAS on one thread too)

        one_thread = threadpoolctl.threadpool_limits(1)
    except ImportError:
        one_thread = contextlib.nullcontext()
    with one_thread:
        print(f"{'workload':<10}{'minigrad ms':>13}{'torch ms':>10}{'ratio':>8}{'gate':>7}{'':5}"
              f"{'faults/step (mg, torch)':>25}")
        for wid in args.only.split(","):
            check(libs, wid)
            ms, faults = timed(libs, wid, args.steps, args.repeats)
            r = ms["minigrad"] / ms["torch"]
            verdict = "ok" if r <= GATES[wid] else "MISS"
            gate = f"<= {GATES[wid]}"
            shown = f"{faults['minigrad']:.0f}, {faults['torch']:.0f}" if resource else "-"
            print(f"{wid:<10}{ms['minigrad']:>13.2f}{ms['torch']:>10.2f}{r:>8.2f}{gate:>7} {verdict:<4}{shown:>25}")


if __name__ == "__main__":
    main()
