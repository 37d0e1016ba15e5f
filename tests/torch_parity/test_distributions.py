"""`torch.distributions` as lecture code uses it (policy gradients, VAEs, sampling tokens), against PyTorch 2.13:
log_prob and entropy values, their gradients and nodes; rsample's gradient; samples' shapes, dtypes, support and
spread (the draws themselves come from minigrad's own stream); validation errors; reprs."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(99)
WEIGHTS = RNG.standard_normal((4, 3))


def _both(torch):
    return (torch, minigrad)


def _names(node, depth=4):
    if node is None or depth == 0:
        return None
    return type(node).__name__, tuple(_names(n, depth - 1) for n, _ in node.next_functions)


def _scored(lib, make, params, value, weights):
    """log_prob and entropy of `make(lib, *params)` at `value`, their gradients and graphs."""
    leaves = [lib.tensor(p, requires_grad=True) for p in params]
    dist = make(lib, *leaves)
    lp, ent = dist.log_prob(lib.tensor(value)), dist.entropy()
    w = lib.tensor(weights[: lp.numel()].reshape(lp.shape) if lp.dim() else weights.flat[0])
    ((lp * w).sum() + (ent * w).sum()).backward()
    return ([lp.detach().numpy(), ent.detach().numpy()] + [t.grad.numpy() for t in leaves],
            _names(lp.grad_fn), _names(ent.grad_fn), repr(dist).replace("torch.", "minigrad."))


def _compare(torch, make, params, value):
    weights = RNG.standard_normal(64)
    t, m = (_scored(lib, make, params, value, weights) for lib in _both(torch))
    for a, b in zip(m[0], t[0]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert m[1:] == t[1:]


CASES = {
    "normal": (lambda lib, loc, scale: lib.distributions.Normal(loc, scale),
               [RNG.standard_normal(3), RNG.uniform(0.5, 2.0, 3)], RNG.standard_normal((2, 3))),
    "normal-number-scale": (lambda lib, loc: lib.distributions.Normal(loc, 0.7), [RNG.standard_normal(3)],
                            RNG.standard_normal(3)),
    "categorical-logits": (lambda lib, logits: lib.distributions.Categorical(logits=logits),
                           [RNG.standard_normal((4, 5))], np.array([0, 4, 2, 2])),
    "categorical-probs": (lambda lib, p: lib.distributions.Categorical(probs=p), [RNG.dirichlet(np.ones(5), 4)],
                          np.array([1, 0, 3, 4])),
    "categorical-1d": (lambda lib, p: lib.distributions.Categorical(p), [RNG.uniform(0.1, 1.0, 5)],
                       np.array([3, 0, 3])),
    "bernoulli-probs": (lambda lib, p: lib.distributions.Bernoulli(probs=p), [RNG.uniform(0.05, 0.95, 6)],
                        np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])),
    "bernoulli-logits": (lambda lib, z: lib.distributions.Bernoulli(logits=z), [RNG.standard_normal((2, 3))],
                         np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_log_prob_and_entropy_values_gradients_and_graphs(torch, case):
    _compare(torch, *CASES[case])


def test_normal_rsample_is_differentiable_and_sample_is_not(torch):
    for lib in _both(torch):
        lib.manual_seed(0)
        loc = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        scale = lib.tensor([2.0, 0.5], dtype=lib.float64, requires_grad=True)
        dist = lib.distributions.Normal(loc, scale)
        x = dist.rsample((3,))
        assert x.shape == (3, 2) and type(x.grad_fn).__name__ == "AddBackward0"
        x.sum().backward()
        eps = (x.detach() - loc.detach()) / scale.detach()
        np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
        np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-12)
        s = dist.sample((20000,))
        assert s.requires_grad is False and s.dtype == lib.float64 and s.shape == (20000, 2)
        np.testing.assert_allclose(s.mean(0).numpy(), [0.5, -1.0], atol=0.05)
        np.testing.assert_allclose(s.std(0).numpy(), [2.0, 0.5], rtol=0.03)
        assert lib.distributions.Normal(0.0, 1.0).sample().shape == ()


def test_categorical_and_bernoulli_samples(torch):
    probs = np.array([[0.1, 0.6, 0.3], [0.8, 0.1, 0.1]])
    for lib in _both(torch):
        cat = lib.distributions.Categorical(probs=lib.tensor(probs))
        s = cat.sample((20000,))
        assert s.shape == (20000, 2) and s.dtype == lib.int64
        freq = np.stack([(s.numpy() == k).mean(0) for k in range(3)], 1)
        np.testing.assert_allclose(freq, probs, atol=0.02)
        assert cat.sample().shape == (2,) and cat.mode.tolist() == [1, 0]
        b = lib.distributions.Bernoulli(lib.tensor([0.2, 0.9]))
        bs = b.sample((20000,))
        assert bs.dtype == lib.float32 and set(np.unique(bs.numpy())) <= {0.0, 1.0}
        np.testing.assert_allclose(bs.mean(0).numpy(), [0.2, 0.9], atol=0.02)


def test_properties_and_shapes(torch):
    res = {}
    for lib in _both(torch):
        n = lib.distributions.Normal(lib.tensor([[0.0, 1.0]]), lib.tensor([2.0, 3.0]))
        c = lib.distributions.Categorical(logits=lib.zeros(2, 4))
        b = lib.distributions.Bernoulli(probs=lib.tensor([0.25, 0.5]))
        res[lib.__name__] = [tuple(n.batch_shape), tuple(n.event_shape), n.mean.tolist(), n.stddev.tolist(),
                             n.variance.tolist(), tuple(c.batch_shape), c.probs.tolist(), c.param_shape,
                             c.enumerate_support().tolist(), b.mean.tolist(), b.variance.tolist(),
                             b.logits.tolist(), n.has_rsample, c.has_enumerate_support]
    assert res["minigrad"] == res["torch"]


def test_validation_errors(torch):
    def same(fn, phrase):
        out = []
        for lib in _both(torch):
            with pytest.raises(ValueError) as e:
                fn(lib)
            out.append(str(e.value))
        assert phrase in out[0] and out[1].replace("minigrad.", "torch.") == out[0], out

    same(lambda lib: lib.distributions.Normal(0.0, -1.0), "to satisfy the constraint GreaterThan(lower_bound=0.0)")
    same(lambda lib: lib.distributions.Categorical(), "Either `probs` or `logits` must be specified, but not both.")
    same(lambda lib: lib.distributions.Categorical(probs=lib.tensor(0.5)), "must be at least one-dimensional")
    same(lambda lib: lib.distributions.Categorical(logits=lib.zeros(3)).log_prob(lib.tensor(3)),
         "to be within the support (IntegerInterval(lower_bound=0, upper_bound=2))")
    same(lambda lib: lib.distributions.Bernoulli(probs=lib.tensor([1.5])),
         "to satisfy the constraint Interval(lower_bound=0.0, upper_bound=1.0)")
    same(lambda lib: lib.distributions.Normal(lib.zeros(3), 1.0).log_prob(lib.zeros(2)),
         "Value is not broadcastable with batch_shape+event_shape")
    with pytest.raises(AttributeError, match="does not implement torch.distributions.Dirichlet"):
        minigrad.distributions.Dirichlet  # noqa: B018


def test_finfo_iinfo_and_bernoulli_function(torch):
    for name in ("float16", "float32", "float64"):
        assert repr(minigrad.finfo(getattr(minigrad, name))) == repr(torch.finfo(getattr(torch, name)))
    assert repr(minigrad.iinfo(minigrad.int64)) == repr(torch.iinfo(torch.int64))
    assert minigrad.finfo().eps == torch.finfo().eps and minigrad.finfo(minigrad.float64).min == \
        torch.finfo(torch.float64).min
    for lib in _both(torch):
        with pytest.raises(TypeError, match="requires a floating point input type"):
            lib.finfo(lib.int64)
        x = lib.bernoulli(lib.full((4000,), 0.3, dtype=lib.float64))
        assert x.dtype == lib.float64 and abs(x.mean().item() - 0.3) < 0.03
        with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1"):
            lib.bernoulli(lib.tensor([1.5]))
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            lib.bernoulli(lib.tensor([1]))


def test_classes_by_their_module_path(torch):
    for lib in _both(torch):
        assert lib.distributions.normal.Normal is lib.distributions.Normal
        assert lib.distributions.categorical.Categorical is lib.distributions.Categorical
        assert lib.distributions.bernoulli.Bernoulli is lib.distributions.Bernoulli
        assert issubclass(lib.distributions.Normal, lib.distributions.distribution.Distribution)
