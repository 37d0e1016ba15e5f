"""Port of d2l.ai "Attention Scoring Functions" (PyTorch tab): masked softmax, batch matmul, scaled dot-product
and additive attention.

Source: github.com/d2l-ai/d2l-en, chapter_attention-mechanisms-and-transformers/attention-scoring-functions.md
(commit 003f46d8), published as d2l.ai/chapter_attention-mechanisms-and-transformers/
attention-scoring-functions.html. `d2l` is the namespace of d2l_lib.py built over the library under test. The
code is the chapter's PyTorch cells, in order: `masked_softmax` (its `_sequence_mask` writes `X[~mask] = value`
into a tensor of the graph; `torch.repeat_interleave` repeats the valid lengths), `torch.bmm`,
`DotProductAttention`, `AdditiveAttention` (nn.LazyLinear layers, unsqueeze/broadcast, tanh, squeeze).
Changes:
- `torch.rand` and `d2l.normal` draws -> NumPy draws wrapped by the library; the chapter's printed softmax
  values (random) are replaced by checks against a NumPy reference of the same formula;
- `show_heatmaps` (a plot) -> the attention weights are checked to vanish beyond the valid lengths;
- AdditiveAttention's lazily drawn weights are overwritten with NumPy draws after the chapter's call, and the
  output and the gradients of a loss through it are checked against the NumPy reference.
"""

from __future__ import annotations

import math

import numpy as np
import teaching_d2l

RNG_SEED = 3


def _np_masked_softmax(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    valid = np.repeat(valid, x.shape[1]) if valid.ndim == 1 else valid.reshape(-1)
    flat = x.reshape(-1, x.shape[-1]).copy()
    flat[np.arange(x.shape[-1])[None, :] >= valid[:, None]] = -1e6
    e = np.exp(flat - flat.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).reshape(x.shape)


def program(torch, rng):
    nn = torch.nn
    d2l = teaching_d2l.make_d2l(torch)

    def masked_softmax(X, valid_lens):  #@save
        """Perform softmax operation by masking elements on the last axis."""
        # X: 3D tensor, valid_lens: 1D or 2D tensor
        def _sequence_mask(X, valid_len, value=0):
            maxlen = X.size(1)
            mask = torch.arange((maxlen), dtype=torch.float32,
                                device=X.device)[None, :] < valid_len[:, None]
            X[~mask] = value
            return X

        if valid_lens is None:
            return nn.functional.softmax(X, dim=-1)
        else:
            shape = X.shape
            if valid_lens.dim() == 1:
                valid_lens = torch.repeat_interleave(valid_lens, shape[1])
            else:
                valid_lens = valid_lens.reshape(-1)
            # On the last axis, replace masked elements with a very large negative
            # value, whose exponentiation outputs 0
            X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
            return nn.functional.softmax(X.reshape(shape), dim=-1)

    out = {}
    x1, x2 = rng.random((2, 2, 4), dtype=np.float32), rng.random((2, 2, 4), dtype=np.float32)  # were torch.rand
    out["softmax_1d"] = (x1, masked_softmax(torch.tensor(x1), torch.tensor([2, 3])))
    out["softmax_2d"] = (x2, masked_softmax(torch.tensor(x2), d2l.tensor([[1, 3], [2, 4]])))

    Q = d2l.ones((2, 3, 4))
    K = d2l.ones((2, 4, 6))
    d2l.check_shape(torch.bmm(Q, K), (2, 3, 6))

    class DotProductAttention(nn.Module):  #@save
        """Scaled dot product attention."""
        def __init__(self, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)

        # Shape of queries: (batch_size, no. of queries, d)
        # Shape of keys: (batch_size, no. of key-value pairs, d)
        # Shape of values: (batch_size, no. of key-value pairs, value dimension)
        # Shape of valid_lens: (batch_size,) or (batch_size, no. of queries)
        def forward(self, queries, keys, values, valid_lens=None):
            d = queries.shape[-1]
            # Swap the last two dimensions of keys with keys.transpose(1, 2)
            scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
            self.attention_weights = masked_softmax(scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((2, 1, 2), (2, 10, 2), (2, 10, 4)))
    queries, keys, values = torch.tensor(q), torch.tensor(k), torch.tensor(v)  # were d2l.normal(0, 1, ...)
    valid_lens = d2l.tensor([2, 6])

    attention = DotProductAttention(dropout=0.5)
    attention.eval()
    result = attention(queries, keys, values, valid_lens)
    d2l.check_shape(result, (2, 1, 4))
    out["dot"] = ((q, k, v), result, attention.attention_weights)

    class AdditiveAttention(nn.Module):  #@save
        """Additive attention."""
        def __init__(self, num_hiddens, dropout, **kwargs):
            super(AdditiveAttention, self).__init__(**kwargs)
            self.W_k = nn.LazyLinear(num_hiddens, bias=False)
            self.W_q = nn.LazyLinear(num_hiddens, bias=False)
            self.w_v = nn.LazyLinear(1, bias=False)
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens):
            queries, keys = self.W_q(queries), self.W_k(keys)
            # After dimension expansion, shape of queries: (batch_size, no. of
            # queries, 1, num_hiddens) and shape of keys: (batch_size, 1, no. of
            # key-value pairs, num_hiddens). Sum them up with broadcasting
            features = queries.unsqueeze(2) + keys.unsqueeze(1)
            features = torch.tanh(features)
            # There is only one output of self.w_v, so we remove the last
            # one-dimensional entry from the shape. Shape of scores: (batch_size,
            # no. of queries, no. of key-value pairs)
            scores = self.w_v(features).squeeze(-1)
            self.attention_weights = masked_softmax(scores, valid_lens)
            # Shape of values: (batch_size, no. of key-value pairs, value
            # dimension)
            return torch.bmm(self.dropout(self.attention_weights), values)

    q20 = rng.standard_normal((2, 1, 20)).astype(np.float32)
    queries = torch.tensor(q20)  # was d2l.normal(0, 1, (2, 1, 20))

    attention = AdditiveAttention(num_hiddens=8, dropout=0.1)
    attention.eval()
    d2l.check_shape(attention(queries, keys, values, valid_lens), (2, 1, 4))

    # added: NumPy weights, then the output and the gradients of a loss through the layer
    ws = {name: rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5
          for name, p in attention.named_parameters()}
    with torch.no_grad():
        for name, p in attention.named_parameters():
            p.copy_(torch.tensor(ws[name]))
    queries.requires_grad_(True)
    result = attention(queries, keys, values, valid_lens)
    (result ** 2).sum().backward()
    out["additive"] = ((q20, k, v, ws), result, queries.grad, attention.W_q.weight.grad)
    return out


def _np_additive(q, k, v, ws, valid):
    qh, kh = q @ ws["W_q.weight"].T, k @ ws["W_k.weight"].T
    features = np.tanh(qh[:, :, None, :] + kh[:, None, :, :])
    scores = (features @ ws["w_v.weight"].T)[..., 0]
    return _np_masked_softmax(scores, valid) @ v


def test_attention_scoring_functions(lib):
    out = program(lib, np.random.default_rng(RNG_SEED))
    for key, valid in (("softmax_1d", np.array([2, 3])), ("softmax_2d", np.array([[1, 3], [2, 4]]))):
        x, got = out[key]
        np.testing.assert_allclose(got.numpy(), _np_masked_softmax(x.astype(np.float64), valid), rtol=1e-5,
                                   atol=1e-7)
    (q, k, v), result, weights = out["dot"]
    scores = q.astype(np.float64) @ k.transpose(0, 2, 1) / math.sqrt(2)
    want = _np_masked_softmax(scores, np.array([2, 6]))
    np.testing.assert_allclose(weights.numpy(), want, rtol=1e-5, atol=1e-7)
    assert not weights.numpy()[0, 0, 2:].any() and not weights.numpy()[1, 0, 6:].any()  # the heat map's message
    np.testing.assert_allclose(result.numpy(), want @ v, rtol=1e-5, atol=1e-6)
    (q20, k, v, ws), result, q_grad, w_grad = out["additive"]
    np.testing.assert_allclose(result.detach().numpy(), _np_additive(q20, k, v, ws, np.array([2, 6])), rtol=1e-4,
                               atol=1e-6)
    # the gradient of sum(result²) w.r.t. the queries, by central differences on the NumPy reference
    eps, num = 1e-3, np.zeros_like(q20, dtype=np.float64)
    q64, ws64 = q20.astype(np.float64), {n: w.astype(np.float64) for n, w in ws.items()}
    for idx in np.ndindex(*q20.shape):
        plus, minus = q64.copy(), q64.copy()
        plus[idx] += eps
        minus[idx] -= eps
        f = (lambda qq: (_np_additive(qq, k.astype(np.float64), v.astype(np.float64), ws64, np.array([2, 6])) ** 2)
             .sum())
        num[idx] = (f(plus) - f(minus)) / (2 * eps)
    np.testing.assert_allclose(q_grad.numpy(), num, rtol=2e-3, atol=2e-4)
    assert tuple(w_grad.shape) == (8, 20) and np.abs(w_grad.numpy()).sum() > 0
