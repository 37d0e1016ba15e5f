"""Port of Karpathy's makemore lecture 1 ("The spelled-out intro to language modeling: building makemore").

Source: github.com/karpathy/nn-zero-to-hero, lectures/makemore/makemore_part1_bigrams.ipynb (commit
73c3fcc741f0ec104ca850b1fb0df90e7e8d4cde). The notebook's code cells in order: a bigram count matrix
built with `N[ix1, ix2] += 1`, smoothed probabilities `P /= P.sum(1, keepdims=True)`, sampling names with
`torch.multinomial(..., generator=g)`, the average negative log likelihood, then the same model as a
one-layer neural net on `F.one_hot` inputs trained by gradient descent with
`loss = -probs[torch.arange(num), ys].log().mean() + 0.01*(W**2).mean()`. Changes:
- names.txt (32,033 names) -> 1,500 synthetic names; plotting (matplotlib) dropped;
- `torch.randn((27, 27), generator=g, requires_grad=True)` -> a NumPy draw wrapped with requires_grad=True;
- gradient descent runs 30 steps (the lecture's cell shows 1, its video runs 100); sampling draws 5 names
  (different letters in each library: their random streams differ), so names are checked for their
  alphabet and the final '.';
- the counting model's NLL is checked against NumPy, the neural net's loss against values recorded from
  PyTorch 2.13; after training it approaches the counting model's NLL, as the lecture shows.
"""

from __future__ import annotations

import numpy as np
import pytest
import teaching_helpers as h

RECORDED_NN_LOSSES = [3.7895, 2.7656, 2.5984, 2.5242, 2.4804, 2.4524]  # steps 0, 5, ..., 25


def program(torch, words):
    F = torch.nn.functional

    N = torch.zeros((27, 27), dtype=torch.int32)
    chars = sorted(list(set(''.join(words))))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi['.'] = 0
    itos = {i: s for s, i in stoi.items()}

    for w in words:
        chs = ['.'] + list(w) + ['.']
        for ch1, ch2 in zip(chs, chs[1:]):
            ix1 = stoi[ch1]
            ix2 = stoi[ch2]
            N[ix1, ix2] += 1

    p = N[0].float()
    p = p / p.sum()
    g = torch.Generator().manual_seed(2147483647)
    ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
    first = itos[ix]

    P = (N + 1).float()
    P /= P.sum(1, keepdims=True)

    g = torch.Generator().manual_seed(2147483647)
    samples = []
    for i in range(5):
        out = []
        ix = 0
        while True:
            p = P[ix]
            ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
            out.append(itos[ix])
            if ix == 0:
                break
        samples.append(''.join(out))
        print(''.join(out))

    log_likelihood = 0.0
    n = 0
    for w in words:
        chs = ['.'] + list(w) + ['.']
        for ch1, ch2 in zip(chs, chs[1:]):
            ix1 = stoi[ch1]
            ix2 = stoi[ch2]
            prob = P[ix1, ix2]
            logprob = torch.log(prob)
            log_likelihood += logprob
            n += 1

    print(f'{log_likelihood=}')
    nll = -log_likelihood
    print(f'{nll=}')
    print(f'{nll/n}')

    # create the dataset
    xs, ys = [], []
    for w in words:
        chs = ['.'] + list(w) + ['.']
        for ch1, ch2 in zip(chs, chs[1:]):
            ix1 = stoi[ch1]
            ix2 = stoi[ch2]
            xs.append(ix1)
            ys.append(ix2)
    xs = torch.tensor(xs)
    ys = torch.tensor(ys)
    num = xs.nelement()
    print('number of examples: ', num)

    # initialize the 'network'
    W = torch.tensor(np.random.default_rng(2147483647).standard_normal((27, 27)).astype(np.float32),
                     requires_grad=True)  # was torch.randn((27, 27), generator=g, requires_grad=True)

    losses = []
    # gradient descent
    for k in range(30):
        # forward pass
        xenc = F.one_hot(xs, num_classes=27).float()  # input to the network: one-hot encoding
        logits = xenc @ W  # predict log-counts
        counts = logits.exp()  # counts, equivalent to N
        probs = counts / counts.sum(1, keepdims=True)  # probabilities for next character
        loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W**2).mean()
        print(loss.item())
        losses.append(loss.item())

        # backward pass
        W.grad = None  # set to zero the gradient
        loss.backward()

        # update
        W.data += -50 * W.grad

    # finally, sample from the 'neural net' model
    g = torch.Generator().manual_seed(2147483647)
    for i in range(5):
        out = []
        ix = 0
        while True:
            xenc = F.one_hot(torch.tensor([ix]), num_classes=27).float()
            logits = xenc @ W  # predict log-counts
            counts = logits.exp()  # counts, equivalent to N
            p = counts / counts.sum(1, keepdims=True)  # probabilities for next character
            ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
            out.append(itos[ix])
            if ix == 0:
                break
        samples.append(''.join(out))
    return N, first, samples, (nll / n).item(), losses, stoi


def test_bigram_counts_sampling_and_neural_net(lib):
    words = h.synthetic_names(1500, seed=0)
    out, (N, first, samples, nll, losses, stoi) = h.printed(program, lib, words)
    # the counting model, checked with NumPy
    counts = np.zeros((27, 27), np.int64)
    for w in words:
        chs = ['.'] + list(w) + ['.']
        for a, b in zip(chs, chs[1:]):
            counts[stoi[a], stoi[b]] += 1
    np.testing.assert_array_equal(N.numpy(), counts)
    assert str(N.dtype).endswith("int32") and first in stoi
    probs = (counts + 1) / (counts + 1).sum(1, keepdims=True)
    pairs = [(stoi[a], stoi[b]) for w in words for a, b in zip('.' + w, w + '.')]
    want = -np.mean([np.log(probs[i, j]) for i, j in pairs])
    assert nll == pytest.approx(want, rel=1e-5)
    assert out.splitlines()[5].startswith("log_likelihood=tensor(-")
    assert all(s.endswith('.') and set(s) <= set(stoi) for s in samples) and len(samples) == 10
    # the neural net: recorded losses, and it approaches the counting model's NLL
    np.testing.assert_allclose(losses[::5], RECORDED_NN_LOSSES, atol=2e-4)
    assert losses[-1] < losses[0] - 1.0 and losses[-1] < want + 0.3
