"""Port of Karpathy's makemore lecture 4 ("Building makemore Part 4: Becoming a Backprop Ninja").

Source: github.com/karpathy/nn-zero-to-hero, lectures/makemore/makemore_part4_backprop.ipynb (commit
73c3fcc741f0ec104ca850b1fb0df90e7e8d4cde). An MLP with an embedding table, a hand-written BatchNorm and
a hand-written cross-entropy (`logprobs[range(n), Yb]`, `counts.sum(1, keepdims=True)`), every
intermediate `retain_grad()`-ed; exercise 1 backpropagates by hand through each step (`dlogprobs[range(n),
Yb] = -1.0/n`, `F.one_hot(logits.max(1).indices, ...)`, `dC[ix] += demb[k,j]`) and `cmp` checks each manual
gradient against autograd's; exercises 2-3 do cross-entropy and BatchNorm in one formula; exercise 4
trains with the manual gradients, tracking `loss.log10()`. The code is the notebook's. Changes:
- names.txt -> 1,500 synthetic names (random.seed(42) shuffle and the 80/10/10 split kept);
- the `torch.randn(..., generator=g)` / `torch.randint(..., generator=g)` draws -> NumPy draws wrapped
  by the library (the same parameters and batches in both libraries);
- exercise 4: n_hidden 200 -> 64, max_steps 200,000 -> 300, prints every 100 steps (was 10,000);
- `cmp` prints, as in the lecture, and the test asserts its verdicts: every manual gradient is
  `approximate: True` (torch.allclose) with a maxdiff below 1e-6; the losses printed in exercise 4 are
  held to values recorded from PyTorch 2.13, and the log10 losses fall.
"""

from __future__ import annotations

import random
import re

import numpy as np
import teaching_helpers as h

RECORDED_TRAIN = [3.5447, 2.9187, 2.7046]  # exercise 4, steps 0, 100, 200


def program(torch, words):
    F = torch.nn.functional
    rng = np.random.default_rng(2147483647)

    def randn(*shape):  # was torch.randn(shape, generator=g)
        return torch.tensor(rng.standard_normal(shape).astype(np.float32))

    # build the vocabulary of characters and mappings to/from integers
    chars = sorted(list(set(''.join(words))))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi['.'] = 0
    itos = {i: s for s, i in stoi.items()}
    vocab_size = len(itos)

    # build the dataset
    block_size = 3  # context length: how many characters do we take to predict the next one?

    def build_dataset(words):
        X, Y = [], []
        for w in words:
            context = [0] * block_size
            for ch in w + '.':
                ix = stoi[ch]
                X.append(context)
                Y.append(ix)
                context = context[1:] + [ix]  # crop and append
        X = torch.tensor(X)
        Y = torch.tensor(Y)
        print(X.shape, Y.shape)
        return X, Y

    random.seed(42)
    random.shuffle(words)
    n1 = int(0.8 * len(words))
    n2 = int(0.9 * len(words))

    Xtr, Ytr = build_dataset(words[:n1])     # 80%
    Xdev, Ydev = build_dataset(words[n1:n2])   # 10%
    Xte, Yte = build_dataset(words[n2:])     # 10%

    # utility function we will use later when comparing manual gradients to PyTorch gradients
    def cmp(s, dt, t):
        ex = torch.all(dt == t.grad).item()
        app = torch.allclose(dt, t.grad)
        maxdiff = (dt - t.grad).abs().max().item()
        print(f'{s:15s} | exact: {str(ex):5s} | approximate: {str(app):5s} | maxdiff: {maxdiff}')

    n_embd = 10  # the dimensionality of the character embedding vectors
    n_hidden = 64  # the number of neurons in the hidden layer of the MLP

    C = randn(vocab_size, n_embd)
    # Layer 1
    W1 = randn(n_embd * block_size, n_hidden) * (5 / 3) / ((n_embd * block_size)**0.5)
    b1 = randn(n_hidden) * 0.1  # using b1 just for fun, it's useless because of BN
    # Layer 2
    W2 = randn(n_hidden, vocab_size) * 0.1
    b2 = randn(vocab_size) * 0.1
    # BatchNorm parameters
    bngain = randn(1, n_hidden) * 0.1 + 1.0
    bnbias = randn(1, n_hidden) * 0.1

    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    print(sum(p.nelement() for p in parameters))  # number of parameters in total
    for p in parameters:
        p.requires_grad = True

    batch_size = 32
    n = batch_size  # a shorter variable also, for convenience
    # construct a minibatch
    ix = torch.tensor(rng.integers(0, Xtr.shape[0], (batch_size,)))  # was torch.randint(..., generator=g)
    Xb, Yb = Xtr[ix], Ytr[ix]  # batch X,Y

    # forward pass, "chunkated" into smaller steps that are possible to backward one at a time
    emb = C[Xb]  # embed the characters into vectors
    embcat = emb.view(emb.shape[0], -1)  # concatenate the vectors
    # Linear layer 1
    hprebn = embcat @ W1 + b1  # hidden layer pre-activation
    # BatchNorm layer
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff**2
    bnvar = 1 / (n - 1) * (bndiff2).sum(0, keepdim=True)  # note: Bessel's correction (dividing by n-1, not n)
    bnvar_inv = (bnvar + 1e-5)**-0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    # Non-linearity
    h = torch.tanh(hpreact)  # hidden layer
    # Linear layer 2
    logits = h @ W2 + b2  # output layer
    # cross entropy loss (same as F.cross_entropy(logits, Yb))
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes  # subtract max for numerical stability
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum**-1  # if I use (1.0 / counts_sum) instead then I can't get backprop to be bit exact...
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()

    # PyTorch backward pass
    for p in parameters:
        p.grad = None
    for t in [logprobs, probs, counts, counts_sum, counts_sum_inv,  # afaik there is no cleaner way
              norm_logits, logit_maxes, logits, h, hpreact, bnraw,
              bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani,
              embcat, emb]:
        t.retain_grad()
    loss.backward()
    print(loss)

    # Exercise 1: backprop through the whole thing manually
    dlogprobs = torch.zeros_like(logprobs)
    dlogprobs[range(n), Yb] = -1.0 / n
    dprobs = (1.0 / probs) * dlogprobs
    dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
    dcounts = counts_sum_inv * dprobs
    dcounts_sum = (-counts_sum**-2) * dcounts_sum_inv
    dcounts += torch.ones_like(counts) * dcounts_sum
    dnorm_logits = counts * dcounts
    dlogits = dnorm_logits.clone()
    dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
    dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
    dh = dlogits @ W2.T
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dhpreact = (1.0 - h**2) * dh
    dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
    dbnraw = bngain * dhpreact
    dbnbias = dhpreact.sum(0, keepdim=True)
    dbndiff = bnvar_inv * dbnraw
    dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
    dbnvar = (-0.5 * (bnvar + 1e-5)**-1.5) * dbnvar_inv
    dbndiff2 = (1.0 / (n - 1)) * torch.ones_like(bndiff2) * dbnvar
    dbndiff += (2 * bndiff) * dbndiff2
    dhprebn = dbndiff.clone()
    dbnmeani = (-dbndiff).sum(0)
    dhprebn += 1.0 / n * (torch.ones_like(hprebn) * dbnmeani)
    dembcat = dhprebn @ W1.T
    dW1 = embcat.T @ dhprebn
    db1 = dhprebn.sum(0)
    demb = dembcat.view(emb.shape)
    dC = torch.zeros_like(C)
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            ix = Xb[k, j]
            dC[ix] += demb[k, j]

    cmp('logprobs', dlogprobs, logprobs)
    cmp('probs', dprobs, probs)
    cmp('counts_sum_inv', dcounts_sum_inv, counts_sum_inv)
    cmp('counts_sum', dcounts_sum, counts_sum)
    cmp('counts', dcounts, counts)
    cmp('norm_logits', dnorm_logits, norm_logits)
    cmp('logit_maxes', dlogit_maxes, logit_maxes)
    cmp('logits', dlogits, logits)
    cmp('h', dh, h)
    cmp('W2', dW2, W2)
    cmp('b2', db2, b2)
    cmp('hpreact', dhpreact, hpreact)
    cmp('bngain', dbngain, bngain)
    cmp('bnbias', dbnbias, bnbias)
    cmp('bnraw', dbnraw, bnraw)
    cmp('bnvar_inv', dbnvar_inv, bnvar_inv)
    cmp('bnvar', dbnvar, bnvar)
    cmp('bndiff2', dbndiff2, bndiff2)
    cmp('bndiff', dbndiff, bndiff)
    cmp('bnmeani', dbnmeani, bnmeani)
    cmp('hprebn', dhprebn, hprebn)
    cmp('embcat', dembcat, embcat)
    cmp('W1', dW1, W1)
    cmp('b1', db1, b1)
    cmp('emb', demb, emb)
    cmp('C', dC, C)

    # Exercise 2: backprop through cross_entropy but all in one go
    loss_fast = F.cross_entropy(logits, Yb)
    print(loss_fast.item(), 'diff:', (loss_fast - loss).item())
    dlogits = F.softmax(logits, 1)
    dlogits[range(n), Yb] -= 1
    dlogits /= n
    cmp('logits', dlogits, logits)  # I can only get approximate to be true, my maxdiff is 6e-9

    # Exercise 3: backprop through batchnorm but all in one go
    hpreact_fast = bngain * (hprebn - hprebn.mean(0, keepdim=True)) / torch.sqrt(
        hprebn.var(0, keepdim=True, unbiased=True) + 1e-5) + bnbias
    print('max diff:', (hpreact_fast - hpreact).abs().max())
    dhprebn = bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw * (
        dhpreact * bnraw).sum(0))
    cmp('hprebn', dhprebn, hprebn)  # I can only get approximate to be true, my maxdiff is 9e-10

    # Exercise 4: putting it all together! Train the MLP neural net with your own backward pass
    C = randn(vocab_size, n_embd)
    W1 = randn(n_embd * block_size, n_hidden) * (5 / 3) / ((n_embd * block_size)**0.5)
    b1 = randn(n_hidden) * 0.1
    W2 = randn(n_hidden, vocab_size) * 0.1
    b2 = randn(vocab_size) * 0.1
    bngain = randn(1, n_hidden) * 0.1 + 1.0
    bnbias = randn(1, n_hidden) * 0.1

    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    print(sum(p.nelement() for p in parameters))  # number of parameters in total
    for p in parameters:
        p.requires_grad = True

    max_steps = 300
    batch_size = 32
    n = batch_size  # convenience
    lossi = []

    # use this context manager for efficiency once your backward pass is written (TODO)
    with torch.no_grad():
        # kick off optimization
        for i in range(max_steps):
            # minibatch construct
            ix = torch.tensor(rng.integers(0, Xtr.shape[0], (batch_size,)))  # was torch.randint(..., generator=g)
            Xb, Yb = Xtr[ix], Ytr[ix]  # batch X,Y

            # forward pass
            emb = C[Xb]  # embed the characters into vectors
            embcat = emb.view(emb.shape[0], -1)  # concatenate the vectors
            # Linear layer
            hprebn = embcat @ W1 + b1  # hidden layer pre-activation
            # BatchNorm layer
            bnmean = hprebn.mean(0, keepdim=True)
            bnvar = hprebn.var(0, keepdim=True, unbiased=True)
            bnvar_inv = (bnvar + 1e-5)**-0.5
            bnraw = (hprebn - bnmean) * bnvar_inv
            hpreact = bngain * bnraw + bnbias
            # Non-linearity
            h = torch.tanh(hpreact)  # hidden layer
            logits = h @ W2 + b2  # output layer
            loss = F.cross_entropy(logits, Yb)  # loss function

            # backward pass
            for p in parameters:
                p.grad = None

            # manual backprop! #swole_doge_meme
            dlogits = F.softmax(logits, 1)
            dlogits[range(n), Yb] -= 1
            dlogits /= n
            # 2nd layer backprop
            dh = dlogits @ W2.T
            dW2 = h.T @ dlogits
            db2 = dlogits.sum(0)
            # tanh
            dhpreact = (1.0 - h**2) * dh
            # batchnorm backprop
            dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
            dbnbias = dhpreact.sum(0, keepdim=True)
            dhprebn = bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw * (
                dhpreact * bnraw).sum(0))
            # 1st layer
            dembcat = dhprebn @ W1.T
            dW1 = embcat.T @ dhprebn
            db1 = dhprebn.sum(0)
            # embedding
            demb = dembcat.view(emb.shape)
            dC = torch.zeros_like(C)
            for k in range(Xb.shape[0]):
                for j in range(Xb.shape[1]):
                    ix = Xb[k, j]
                    dC[ix] += demb[k, j]
            grads = [dC, dW1, db1, dW2, db2, dbngain, dbnbias]

            # update
            lr = 0.1 if i < 100000 else 0.01  # step learning rate decay
            for p, grad in zip(parameters, grads):
                p.data += -lr * grad  # new way of swole doge TODO: enable

            # track stats
            if i % 100 == 0:  # print every once in a while (was 10000)
                print(f'{i:7d}/{max_steps:7d}: {loss.item():.4f}')
            lossi.append(loss.log10().item())
    return lossi


_RUNS: dict = {}


def run(lib):
    """The program's printout and log10 losses (run once per library, shared by the two tests)."""
    if lib.__name__ not in _RUNS:
        _RUNS[lib.__name__] = h.printed(program, lib, list(h.synthetic_names(1500, seed=1)))
    return _RUNS[lib.__name__]


def verdicts_of(out: str) -> list:
    return re.findall(r"^(\w+)\s+\| exact: (True|False)\s*\| approximate: (True|False)\s*\| maxdiff: (\S+)$",
                      out, re.M)


def test_manual_backprop_matches_autograd_and_trains(lib):
    out, lossi = run(lib)
    verdicts = verdicts_of(out)
    assert len(verdicts) == 26 + 2
    for name, exact, approximate, maxdiff in verdicts:
        assert approximate == "True", name
        assert float(maxdiff) < 1e-6, (name, maxdiff)
    exact = {name for name, ex, _, _ in verdicts[:26] if ex == "True"}
    # bit-exact through the cross-entropy and the second layer, as in the lecture (from the BatchNorm
    # down, the manual and autograd formulas sum in different orders: approximate only). b2 included:
    # before the core redesign minigrad summed a bias gradient as ones @ g (BLAS), not bit-equal.
    assert {"logprobs", "probs", "counts_sum_inv", "counts_sum", "counts", "norm_logits", "logit_maxes",
            "logits", "h", "W2", "b2"} <= exact
    diff = float(re.search(r"diff: (\S+)", out).group(1))
    assert abs(diff) < 1e-5  # loss_fast - loss
    trained = [float(x) for x in re.findall(r"^\s+\d+/\s+300: (\d+\.\d+)$", out, re.M)]
    np.testing.assert_allclose(trained, RECORDED_TRAIN, atol=2e-3)
    assert len(lossi) == 300 and np.mean(lossi[-50:]) < np.mean(lossi[:50]) - 0.05

