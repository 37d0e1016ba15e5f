"""`multinomial` and `normal`: shapes, dtypes and errors against torch 2.13; the distributions by statistics.

minigrad's random stream is not PyTorch's (docs/differences.md), so drawn values are
never compared with torch's. With fixed seeds, chi-square and Kolmogorov-Smirnov tests check that
the draws follow the distribution asked for (thresholds at p = 0.001, so a correct sampler fails
one of them about once in a thousand seeds, and these seeds are fixed); a wrong sampler (e.g.
ranking by p * U, which is not proportional sampling) fails them by orders of magnitude.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import minigrad

P4 = np.array([0.1, 0.2, 0.3, 0.4])


def _gen(seed: int):
    return minigrad.Generator().manual_seed(seed)


def _chi2_ok(counts, expected_probs) -> bool:
    counts = np.asarray(counts, float)
    expected = counts.sum() * np.asarray(expected_probs, float)
    stat = ((counts - expected) ** 2 / expected).sum()
    return stat < stats.chi2.ppf(0.999, len(counts) - 1)


def _shape_dtype(t):
    return tuple(t.shape), str(t.dtype).split(".")[-1]


# -- multinomial ---------------------------------------------------------------------------------------------
MULTINOMIAL_CASES = [
    ("1-d, 2 draws", lambda lib: lib.tensor(P4.tolist()), 2, False),
    ("1-d, replacement", lambda lib: lib.tensor(P4.tolist()), 9, True),
    ("1-d, one draw with replacement", lambda lib: lib.tensor(P4.tolist()), 1, True),
    ("2-d", lambda lib: lib.ones(3, 5), 4, False),
    ("2-d, replacement", lambda lib: lib.ones(3, 5, dtype=lib.float64), 7, True),
    ("unnormalised weights", lambda lib: lib.tensor([1.0, 10.0, 100.0]), 3, False),
    ("no rows", lambda lib: lib.ones(0, 3), 2, False),
    ("float16", lambda lib: lib.tensor([1.0, 2.0]).half(), 1, False),
    ("requires grad (no node)", lambda lib: lib.tensor([1.0, 2.0], requires_grad=True), 1, False),
]


@pytest.mark.parametrize("case,build,n,replacement", MULTINOMIAL_CASES, ids=[c[0] for c in MULTINOMIAL_CASES])
def test_multinomial_shapes_and_dtypes_match_torch(torch, case, build, n, replacement):
    got = []
    for lib in (torch, minigrad):
        out = lib.multinomial(build(lib), n, replacement)
        method = build(lib).multinomial(n, replacement=replacement)
        got.append((_shape_dtype(out), _shape_dtype(method), out.requires_grad, out.grad_fn is None))
    assert got[1] == got[0]


MULTINOMIAL_ERRORS = [
    (lambda lib: lib.multinomial(lib.tensor([0.5, 0.5]), 3), RuntimeError,
     "cannot sample n_sample > prob_dist.size\\(-1\\) samples without replacement"),
    (lambda lib: lib.multinomial(lib.tensor([0.5, 0.5]), 0), RuntimeError, "cannot sample n_sample <= 0 samples"),
    (lambda lib: lib.multinomial(lib.tensor([0.5, 0.5]), -2, True), RuntimeError, "cannot sample n_sample <= 0"),
    (lambda lib: lib.multinomial(lib.tensor([0.2, -0.1]), 1), RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    (lambda lib: lib.multinomial(lib.tensor([0.2, float("nan")]), 1), RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    (lambda lib: lib.multinomial(lib.tensor([0.2, float("inf")]), 2), RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    (lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 1), RuntimeError,
     "invalid multinomial distribution \\(sum of probabilities <= 0\\)"),
    (lambda lib: lib.multinomial(lib.tensor([[0.0, 0.0], [1.0, 1.0]]), 1), RuntimeError,
     "invalid multinomial distribution \\(sum of probabilities <= 0\\)"),
    (lambda lib: lib.multinomial(lib.tensor([0.2, -0.1]), 2, True), RuntimeError,
     "invalid multinomial distribution \\(encountering probability entry < 0\\)"),
    (lambda lib: lib.multinomial(lib.tensor([0.2, float("nan")]), 2, True), RuntimeError,
     "invalid multinomial distribution \\(encountering probability entry < 0\\)"),
    (lambda lib: lib.multinomial(lib.tensor([0.2, float("inf")]), 2, True), RuntimeError,
     "invalid multinomial distribution \\(encountering probability entry = infinity or NaN\\)"),
    (lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 2, True), RuntimeError,
     "invalid multinomial distribution \\(sum of probabilities <= 0\\)"),
    (lambda lib: lib.multinomial(lib.tensor(1.0), 1), RuntimeError, "prob_dist must be 1 or 2 dim"),
    (lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1), RuntimeError, "prob_dist must be 1 or 2 dim"),
    (lambda lib: lib.multinomial(lib.tensor([1, 2]), 1), RuntimeError,
     "multinomial only supports floating-point dtypes for input, got: Long"),
    (lambda lib: lib.multinomial(lib.tensor([True, False]), 1), RuntimeError,
     "multinomial only supports floating-point dtypes for input, got: Bool"),
    (lambda lib: lib.multinomial(lib.tensor([0.5, 0.5]), 2.0), TypeError,
     "multinomial\\(\\): argument 'num_samples' \\(position 2\\) must be int, not float"),
]


@pytest.mark.parametrize("index", range(len(MULTINOMIAL_ERRORS)))
def test_multinomial_errors_match_torch(torch, index):
    call, exc, phrase = MULTINOMIAL_ERRORS[index]
    for lib in (torch, minigrad):
        with pytest.raises(exc, match=phrase):
            call(lib)


def test_multinomial_with_replacement_follows_the_probabilities():
    out = minigrad.multinomial(minigrad.tensor(P4 * 7), 20_000, replacement=True, generator=_gen(0))
    assert out.dtype == minigrad.int64 and out.shape == (20_000,)
    assert _chi2_ok(np.bincount(out.numpy(), minlength=4), P4)
    assert not _chi2_ok(np.bincount(out.numpy(), minlength=4), [0.25] * 4)  # the test has the power to fail


def test_multinomial_rows_are_independent_distributions():
    probs = np.array([[0.7, 0.2, 0.1, 0.0], [0.0, 0.0, 0.5, 0.5]])
    out = minigrad.multinomial(minigrad.tensor(probs), 10_000, replacement=True, generator=_gen(1)).numpy()
    assert _chi2_ok(np.bincount(out[0], minlength=4)[:3], probs[0, :3])
    assert _chi2_ok(np.bincount(out[1], minlength=4)[2:], probs[1, 2:])
    assert not np.any(out[0] == 3) and not np.any(out[1] < 2)  # zero probability: never drawn


def test_multinomial_without_replacement_draws_in_proportion_then_renormalises():
    """First draw ~ p; second draw j given nothing: sum_i p_i p_j / (1 - p_i) (sequential sampling)."""
    rows = 20_000
    out = minigrad.multinomial(minigrad.tensor(np.tile(P4, (rows, 1))), 4, generator=_gen(2)).numpy()
    assert all(sorted(r) == [0, 1, 2, 3] for r in out[:200])  # a permutation: no repeats
    assert _chi2_ok(np.bincount(out[:, 0], minlength=4), P4)
    second = np.array([sum(P4[i] * P4[j] / (1 - P4[i]) for i in range(4) if i != j) for j in range(4)])
    assert _chi2_ok(np.bincount(out[:, 1], minlength=4), second)
    assert not _chi2_ok(np.bincount(out[:, 1], minlength=4), P4)


def test_one_draw_is_proportional_with_or_without_replacement():
    p = minigrad.tensor(np.tile(P4, (20_000, 1)))
    for replacement in (False, True):
        out = minigrad.multinomial(p, 1, replacement, generator=_gen(3)).numpy()[:, 0]
        assert _chi2_ok(np.bincount(out, minlength=4), P4)


def test_multinomial_zero_categories_come_last_without_replacement():
    out = minigrad.multinomial(minigrad.tensor([[0.0, 1.0, 0.0, 2.0]] * 50), 3, generator=_gen(4)).numpy()
    assert all(sorted(r[:2]) == [1, 3] and r[2] in (0, 2) for r in out)


def test_multinomial_is_reproducible_with_generator_and_manual_seed():
    p = minigrad.tensor(P4.tolist())
    a = minigrad.multinomial(p, 50, True, generator=_gen(9))
    assert minigrad.equal(a, minigrad.multinomial(p, 50, True, generator=_gen(9)))
    assert not minigrad.equal(a, minigrad.multinomial(p, 50, True, generator=_gen(10)))
    minigrad.manual_seed(5)
    b = minigrad.multinomial(p, 4)
    minigrad.manual_seed(5)
    assert minigrad.equal(b, minigrad.multinomial(p, 4))


def test_weighted_random_sampler_uses_multinomial(torch):
    from minigrad.utils.data import WeightedRandomSampler

    s = WeightedRandomSampler([1.0, 0.0, 3.0], 4000, generator=_gen(6))
    out = list(s)
    assert len(s) == 4000 and set(out) == {0, 2} and all(type(i) is int for i in out)
    assert _chi2_ok([out.count(0), out.count(2)], [0.25, 0.75])
    assert sorted(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False)) == [0, 1, 2]
    for data in (torch.utils.data, minigrad.utils.data):
        with pytest.raises(ValueError, match="weights should be a 1d sequence but given weights have shape \\(1, 2\\)"):
            data.WeightedRandomSampler([[1.0, 2.0]], 2)
        with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
            data.WeightedRandomSampler([1.0], 0)


# -- normal ------------------------------------------------------------------------------------------------------
NORMAL_CASES = [
    ("tensor, tensor", lambda lib: lib.normal(lib.zeros(2, 3), lib.ones(2, 3))),
    ("tensor, float", lambda lib: lib.normal(lib.zeros(2, 3), 2.0)),
    ("tensor, default std", lambda lib: lib.normal(lib.zeros(4))),
    ("float, tensor", lambda lib: lib.normal(0.0, lib.ones(3))),
    ("float, float64 tensor", lambda lib: lib.normal(1.0, lib.ones(3, dtype=lib.float64))),
    ("float, float, size", lambda lib: lib.normal(0.0, 1.0, size=(2, 2))),
    ("float, float, positional size", lambda lib: lib.normal(2.0, 3.0, (5,))),
    ("ints, list size", lambda lib: lib.normal(0, 1, [3, 1])),
    ("dtype", lambda lib: lib.normal(0.0, 1.0, size=(2,), dtype=lib.float64)),
    ("requires_grad leaf", lambda lib: lib.normal(0.0, 1.0, size=(2,), requires_grad=True)),
    ("broadcast", lambda lib: lib.normal(lib.zeros(3, 1), lib.ones(4))),
    ("mean's dtype wins", lambda lib: lib.normal(lib.zeros(2, dtype=lib.float64), lib.ones(2))),
    ("mean's dtype wins (float32)", lambda lib: lib.normal(lib.zeros(2), lib.ones(2, dtype=lib.float64))),
    ("integer std with float mean", lambda lib: lib.normal(lib.zeros(2), lib.ones(2, dtype=lib.int64))),
    ("0-d", lambda lib: lib.normal(lib.tensor(0.0), lib.tensor(1.0))),
    ("keywords", lambda lib: lib.normal(mean=lib.zeros(2), std=lib.ones(2))),
    ("zero and inf std", lambda lib: lib.normal(lib.zeros(2), 0.0)),
]


@pytest.mark.parametrize("case,call", NORMAL_CASES, ids=[c[0] for c in NORMAL_CASES])
def test_normal_shapes_dtypes_and_flags_match_torch(torch, case, call):
    got = []
    for lib in (torch, minigrad):
        out = call(lib)
        got.append((_shape_dtype(out), out.requires_grad, out.is_leaf, out.grad_fn is None))
    assert got[1] == got[0]


NORMAL_ERRORS = [
    (lambda lib: lib.normal(0.0, 1.0), TypeError, "normal\\(\\) received an invalid combination of arguments - "
                                                  "got \\(float, float\\), but expected one of:"),
    (lambda lib: lib.normal(0.0, 1.0, 3), TypeError, "got \\(float, float, int\\), but expected one of"),
    (lambda lib: lib.normal(lib.zeros(2), 1.0, size=(2,)), TypeError,
     "got \\(Tensor, float, size=tuple\\), but expected one of"),
    (lambda lib: lib.normal(lib.zeros(2, 3), lib.ones(6)), RuntimeError,
     "The size of tensor a \\(3\\) must match the size of tensor b \\(6\\) at non-singleton dimension 1"),
    (lambda lib: lib.normal(lib.zeros(2), -1.0), RuntimeError, "normal expects std >= 0.0, but found std -1$"),
    (lambda lib: lib.normal(0.0, -0.5, (2,)), RuntimeError, "normal expects std >= 0.0, but found std -0.5$"),
    (lambda lib: lib.normal(lib.zeros(2), float("nan")), RuntimeError, "normal expects std >= 0.0, but found std nan"),
    (lambda lib: lib.normal(lib.zeros(2), -lib.ones(2)), RuntimeError, "normal expects all elements of std >= 0.0"),
    (lambda lib: lib.normal(0.0, lib.tensor([1.0, float("nan")])), RuntimeError,
     "normal expects all elements of std >= 0.0"),
    (lambda lib: lib.normal(lib.zeros(2, dtype=lib.int64), 1.0), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda lib: lib.normal(0.0, lib.ones(2, dtype=lib.int32)), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Int'"),
]


@pytest.mark.parametrize("index", range(len(NORMAL_ERRORS)))
def test_normal_errors_match_torch(torch, index):
    call, exc, phrase = NORMAL_ERRORS[index]
    for lib in (torch, minigrad):
        with pytest.raises(exc, match=phrase):
            call(lib)


def test_normal_follows_mean_and_std_elementwise():
    """Each column has its own mean and std (broadcast over 20,000 rows): KS test of the standardised draws."""
    mean = np.array([-3.0, 0.0, 10.0])
    std = np.array([0.5, 1.0, 4.0])
    rows = 20_000
    out = minigrad.normal(minigrad.tensor(np.tile(mean, (rows, 1))), minigrad.tensor(std), generator=_gen(0))
    assert out.dtype == minigrad.float64 and out.shape == (rows, 3)  # (a float64 array makes a float64 mean)
    z = (out.numpy().astype(np.float64) - mean) / std
    for col in range(3):
        assert stats.kstest(z[:, col], "norm").pvalue > 0.001, col
    assert stats.kstest(out.numpy()[:, 2], "norm").pvalue < 1e-6  # unstandardised: clearly not N(0, 1)


@pytest.mark.parametrize("overload", ["float-float", "tensor-float", "float-tensor"])
def test_each_overload_draws_the_right_normal(overload):
    n, gen = 20_000, _gen(11)
    if overload == "float-float":
        out = minigrad.normal(2.0, 3.0, size=(n,), generator=gen, dtype=minigrad.float64)
    elif overload == "tensor-float":
        out = minigrad.normal(minigrad.full((n,), 2.0, dtype=minigrad.float64), 3.0, generator=gen)
    else:
        out = minigrad.normal(2.0, minigrad.full((n,), 3.0, dtype=minigrad.float64), generator=gen)
    x = out.numpy()
    assert out.dtype == minigrad.float64
    assert stats.kstest((x - 2.0) / 3.0, "norm").pvalue > 0.001
    assert abs(x.mean() - 2.0) < 4 * 3.0 / np.sqrt(n)


def test_normal_zero_std_gives_the_mean_and_seeds_repeat():
    mean = minigrad.tensor([1.5, -2.0])
    assert minigrad.normal(mean, 0.0).tolist() == [1.5, -2.0]
    a = minigrad.normal(0.0, 1.0, (5,), generator=_gen(3))
    assert minigrad.equal(a, minigrad.normal(0.0, 1.0, (5,), generator=_gen(3)))
    minigrad.manual_seed(0)
    b = minigrad.normal(minigrad.zeros(5), 1.0)
    minigrad.manual_seed(0)
    assert minigrad.equal(b, minigrad.normal(minigrad.zeros(5), 1.0))


def test_normal_with_a_mean_that_requires_grad_is_not_implemented_yet(torch):
    """PyTorch records NormalBackward1/2/3 here; minigrad says so clearly instead of dropping the gradient."""
    assert torch.normal(torch.zeros(2, requires_grad=True), 1.0).grad_fn.name() == "NormalBackward1"
    with pytest.raises(NotImplementedError, match="minigrad does not implement gradients of torch.normal"):
        minigrad.normal(minigrad.zeros(2, requires_grad=True), 1.0)
    with pytest.raises(NotImplementedError, match="hint: write the sample as mean \\+ std"):
        minigrad.normal(0.0, minigrad.ones(2, requires_grad=True))
    with minigrad.no_grad():
        out = minigrad.normal(minigrad.zeros(2, requires_grad=True), 1.0)
    assert out.grad_fn is None and not out.requires_grad


# -- size= as a keyword (d2l writes torch.rand(size=(8, 8))) ---------------------------------------------------
@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_keyword_matches_torch(torch, name):
    got = []
    for lib in (torch, minigrad):
        fn = getattr(lib, name)
        got.append([_shape_dtype(fn(size=(2, 3))), _shape_dtype(fn(size=[4])), _shape_dtype(fn((2, 1))),
                    _shape_dtype(fn(3, dtype=lib.float64))])
        phrase = ("received an invalid combination of arguments - got \\(int, size=tuple\\)" if name.startswith("rand")
                  else "got multiple values for argument 'size'")
        with pytest.raises(TypeError, match=f"{name}\\(\\) {phrase}"):
            fn(2, size=(2,))
    assert got[1] == got[0]
    with pytest.raises(TypeError, match=f"{name}\\(\\) got an unexpected keyword argument 'shape'"):
        getattr(minigrad, name)(shape=(2,))
