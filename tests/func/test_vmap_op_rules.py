"""The batching rules of minigrad/func/_rules_ops.py against torch.func (PyTorch 2.13): each op under `vmap` gives
torch.func's values, shapes and dtypes, with the batch dim first or not, nested, and under `vmap(grad(...))`,
and without the per-sample loop's performance warning (PyTorch has a rule for each of them). One entry per op."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad

from .test_func_parity import both, errors_alike

RNG = np.random.default_rng(27)
B = 3  # the batch


def _r(*shape):
    return RNG.standard_normal((B,) + shape)


IDX = np.array([[0, 2, 1, 1], [2, 0, 0, 1], [1, 1, 2, 0]])
MASK = np.array([[True, False, True, True], [False, False, True, False], [True, True, True, False]])

# name: (program(lib, *args), arrays (each with the batch in front), which arrays are batched, differentiable)
CASES = {
    "ravel": (lambda lib, x: x.ravel(), [_r(3, 4)]),
    "select": (lambda lib, x: (x.select(1, 2), x.select(-2, 0)), [_r(3, 4)]),
    "tril": (lambda lib, x: x.tril(-1), [_r(3, 4)]),
    "triu": (lambda lib, x: x.triu(1), [_r(3, 4)]),
    "trace": (lambda lib, x: x.trace(), [_r(3, 4)]),
    "repeat": (lambda lib, x: (x.repeat(2, 1, 3), x.repeat(1, 2)), [_r(3, 4)]),
    "tile": (lambda lib, x: (x.tile((2, 1)), x.tile((2,))), [_r(3, 4)]),
    "repeat_interleave": (lambda lib, x: (x.repeat_interleave(2, 1), x.repeat_interleave(2),
                                          x.repeat_interleave(lib.tensor([1, 2, 0]), 0)), [_r(3, 4)]),
    "pad": (lambda lib, x: (lib.nn.functional.pad(x, (1, 2), value=0.5), lib.nn.functional.pad(x, (0, 1, 2, 0))),
            [_r(3, 4)]),
    "constant_pad_nd": (lambda lib, x: lib.constant_pad_nd(x, (1, 1, 0, 2), 1.5), [_r(3, 4)]),
    "pixel_shuffle": (lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2), [_r(8, 2, 3)]),
    "masked_select": (lambda lib, x: x.masked_select(lib.tensor(MASK)), [_r(3, 4)]),
    "view_as": (lambda lib, x, y: x.view_as(y) * y, [_r(3, 4), _r(12)]),
    "reshape_as": (lambda lib, x, y: x.reshape_as(y) + y, [_r(3, 4), _r(2, 6)]),
    "expand_as": (lambda lib, x, y: x.expand_as(y) * y, [_r(1, 4), _r(3, 4)]),
    "meshgrid": (lambda lib, x, y: lib.meshgrid(x, y, indexing="ij") + lib.meshgrid(x, y, indexing="xy"),
                 [_r(3), _r(4)]),
    "byte_short": (lambda lib, x: ((x * 3).byte(), (x * 3).short()), [_r(3, 4)], False),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), [_r(2, 3, 4), _r(2, 4, 5)]),
    "bmm_plain": (lambda lib, a: lib.bmm(a, lib.ones(2, 4, 5, dtype=lib.float64)), [_r(2, 3, 4)]),
    "baddbmm": (lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=0.5, alpha=2.0), [_r(3, 5), _r(2, 3, 4),
                                                                              _r(2, 4, 5)]),
    "gather": (lambda lib, x: x.gather(1, lib.tensor(IDX[:, :3])), [_r(3, 4)]),
    "gather_batched_index": (lambda lib, x, i: x.gather(0, i), [_r(3, 4), np.stack([IDX, IDX[::-1], IDX])]),
    "scatter": (lambda lib, x, s: (x.scatter(1, lib.tensor(IDX[:, :2]), s), x.scatter(0, lib.tensor(IDX), 2.0)),
                [_r(3, 4), _r(3, 2)]),
    "scatter_add": (lambda lib, x, s: x.scatter_add(1, lib.tensor(IDX), s), [_r(3, 4), _r(3, 4)]),
    "embedding_weights": (lambda lib, w: lib.nn.functional.embedding(lib.tensor(IDX), w), [_r(5, 2)]),
    "embedding_both": (lambda lib, w, i: lib.nn.functional.embedding(i, w), [_r(5, 2), np.stack(
        [IDX, IDX[::-1], IDX])]),
    "embedding_indices": (lambda lib, x, i: lib.nn.functional.embedding(i, lib.ones(5, 2, dtype=lib.float64)) * x,
                          [_r(1), np.stack([IDX, IDX[::-1], IDX])]),
    "layer_norm": (lambda lib, x: lib.nn.functional.layer_norm(x, (4,)), [_r(3, 4)]),
    "layer_norm_affine": (lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (3, 4), w, b), [_r(2, 3, 4),
                                                                                              _r(3, 4), _r(3, 4)]),
    "conv_transpose1d": (lambda lib, x: lib.nn.functional.conv_transpose1d(
        x, lib.ones(3, 4, 2, dtype=lib.float64), stride=2), [_r(2, 3, 5)]),
    "conv_transpose2d_weights": (lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(x, w, b, padding=1),
                                 [_r(2, 4, 3, 3), _r(4, 3, 2, 2), _r(3)]),
    "conv_transpose2d_unbatched": (lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, groups=2),
                                   [_r(4, 3, 3), _r(4, 1, 2, 2)]),
    "convolution": (lambda lib, x, w: lib.convolution(x, w, None, [1], [1], [1], False, [0], 1),
                    [_r(2, 3, 5), _r(4, 3, 2)]),
    "max_pool2d": (lambda lib, x: lib.nn.functional.max_pool2d(x, 2, return_indices=True)[0] * 2, [_r(2, 4, 4)]),
    "max_pool2d_indices": (lambda lib, x: lib.nn.functional.max_pool2d(x, 2, return_indices=True)[1],
                           [_r(2, 4, 4)], False),
    "unfold": (lambda lib, x: lib.nn.functional.unfold(x, 2, padding=1), [_r(2, 3, 3, 4)]),
    "fold": (lambda lib, x: lib.nn.functional.fold(x, (3, 3), 2), [_r(2, 8, 4)]),
    "smooth_l1_loss": (lambda lib, x, y: (lib.nn.functional.smooth_l1_loss(x, y, beta=0.5),
                                          lib.nn.functional.smooth_l1_loss(x, y, reduction="none")),
                       [_r(3, 4), _r(3, 4)]),
    "msort": (lambda lib, x: x.msort(), [_r(3, 4)]),
    "roll": (lambda lib, x: (x.roll(5), x.roll((1, -2), (0, 1)), x.roll(-1, 1)), [_r(3, 4)]),
    "sum_to_size": (lambda lib, x: (x.sum_to_size(1, 4), x.sum_to_size((4,)), x.sum_to_size(3, 1)), [_r(3, 4)]),
    "interpolate": (lambda lib, x: lib.nn.functional.interpolate(x, size=(5, 7)), [_r(2, 1, 3, 4)]),
    "scaled_dot_product_attention": (lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=lib.tensor(MASK)), [_r(2, 3, 4), _r(2, 4, 4), _r(2, 4, 2)]),
}


def _run(lib, name: str, arrays: list, in_dim: int, nested: bool = False, through_grad: bool = False):
    program = CASES[name][0]
    f = (lambda *xs: program(lib, *xs))
    if through_grad:
        g = f

        def total(*xs):
            out = g(*xs)
            return sum(o.sum() for o in (out if isinstance(out, tuple) else (out,)) if o.is_floating_point())
        f = lib.func.grad(total)
    tensors = [lib.tensor(np.moveaxis(a, 0, in_dim) if a.ndim > 1 else a) for a in arrays]
    if nested:  # an outer batch of 2 in front (the second half negated), the inner one at in_dim
        tensors = [lib.stack([t, -t if t.is_floating_point() else t]) for t in tensors]
        inner = lib.vmap(f, in_dims=in_dim)
        return lib.vmap(inner, in_dims=0, out_dims=-1)(*tensors)
    return lib.vmap(f, in_dims=in_dim, out_dims=-1 if in_dim else 0)(*tensors)


def _no_loop(torch, program):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the fallback's performance warning (or any other) fails the test
        warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated", DeprecationWarning)  # (torch's jvp)
        both(torch, program)


@pytest.mark.parametrize("in_dim", [0, 1, -1])
@pytest.mark.parametrize("name", CASES)
def test_op_rule_against_torch_func(torch, name, in_dim):
    arrays = CASES[name][1]
    _no_loop(torch, lambda lib: _run(lib, name, arrays, in_dim))


# (view_as nested: PyTorch's physical tensor is not contiguous there, and its view refuses it)
@pytest.mark.parametrize("name", [n for n in CASES if n != "view_as"])
def test_op_rule_nested(torch, name):
    _no_loop(torch, lambda lib: _run(lib, name, CASES[name][1], 1, nested=True))


# (masked_select: PyTorch's backward, masked_scatter, has no batching rule: it warns, minigrad's backward does not)
@pytest.mark.parametrize("name", [n for n, case in CASES.items() if len(case) == 2 and n != "masked_select"])
def test_op_rule_under_per_sample_grad(torch, name):
    _no_loop(torch, lambda lib: _run(lib, name, CASES[name][1], 0, through_grad=True))


def test_masked_select_with_a_batched_mask_is_refused(torch):
    x = RNG.standard_normal((3, 4))
    errors_alike(torch, lambda lib: lib.vmap(lambda v: v.masked_select(v > 0))(lib.tensor(x)))


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("name", [n for n, case in CASES.items() if len(case) == 2])
def test_op_rule_under_jacobians(torch, name, transform):
    """jacrev and jacfwd batch their rows / columns through the same rules (one sample's Jacobian)."""
    program, arrays = CASES[name][:2]

    def run(lib):
        def f(*xs):
            out = program(lib, *xs)
            return tuple(o for o in out if o.is_floating_point()) if isinstance(out, tuple) else out
        return getattr(lib.func, transform)(f)(*(lib.tensor(a[0]) for a in arrays))
    _no_loop(torch, run)


def _warnings_of(program) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program()
    return [str(w.message).split(" Please")[0] for w in caught if "performance drop" in str(w.message)]


def test_attention_on_4d_samples_loops_with_pytorchs_warning(torch):
    """4-D samples take PyTorch's fused CPU kernel, which has no batching rule: the loop and its warning, as
    PyTorch's; 3-D samples take its math path, batched."""
    q = RNG.standard_normal((3, 2, 2, 4, 4))

    def run(lib, x):
        return lambda: lib.vmap(lambda a: lib.nn.functional.scaled_dot_product_attention(a, a * 2, a.sin(),
                                                                                         is_causal=True))(x)
    for x in (q, q[:, 0]):
        want = _warnings_of(run(torch, torch.tensor(x)))
        assert _warnings_of(run(minigrad, minigrad.tensor(x))) == want
        assert want == (["There is a performance drop because we have not yet implemented the batching rule for "
                         "aten::_scaled_dot_product_flash_attention_for_cpu."] if x.ndim == 5 else [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the loop's warning, checked above)
        both(torch, lambda lib: run(lib, lib.tensor(q))())
    # a key batched at its last dim: its head dim is not of stride 1, so PyTorch takes its math path (no loop)
    k = RNG.standard_normal((2, 2, 4, 4, 3))
    _no_loop(torch, lambda lib: lib.vmap(lambda a, b: lib.nn.functional.scaled_dot_product_attention(a, b, b),
                                         in_dims=(None, -1))(lib.tensor(q[0]), lib.tensor(k)))
    with warnings.catch_warnings():  # jacfwd: the fused kernel's forward-AD error, and no loop warning before it
        warnings.filterwarnings("error", "There is a performance drop")
        errors_alike(torch, lambda lib: lib.func.jacfwd(lambda a: lib.nn.functional.scaled_dot_product_attention(
            a, a * 2, a.sin()))(lib.tensor(q[0])))


@pytest.mark.parametrize("case", [
    # layer_norm's batched weight (jacfwd's tangents) of another dtype than the input: refused, as PyTorch
    lambda lib: lib.func.jacfwd(lambda x, w: lib.nn.functional.layer_norm(
        x, (3, 4), weight=w, bias=lib.zeros(3, 4)), argnums=(0, 1))(lib.zeros(1, 3, 4, dtype=lib.float64),
                                                                    lib.ones(3, 4, dtype=lib.float64)),
    # scatter_add with an index smaller than src: PyTorch's backward refuses, naming the sample's shapes
    lambda lib: lib.func.jacrev(lambda a: a.scatter_add(0, lib.zeros(2, 0, dtype=lib.int64), a))(
        lib.zeros(1, 3, dtype=lib.float64)),
    # a transposed convolution's input channels that are not the weight's: PyTorch's error names the sample's shape
    lambda lib: lib.func.jacfwd(lambda x: lib.nn.functional.conv_transpose1d(x, lib.ones(
        4, 3, 3, dtype=lib.float64), stride=2))(lib.ones(1, 1, 3, dtype=lib.float64)),
], ids=["layer_norm-dtypes", "scatter_add-index-smaller", "conv_transpose-channels"])
def test_op_rule_errors(torch, case):
    errors_alike(torch, case)


def test_batched_weights_over_an_empty_batch(torch):
    """jacrev with no rows: the grouped convolution of no copies of the weight (was a ZeroDivisionError)."""
    both(torch, lambda lib: lib.func.jacrev(lambda e, w: (lib.nn.functional.conv_transpose1d(
        lib.ones(1, 4, 1, dtype=lib.float64), w, stride=2), e)[1], argnums=(0, 1))(
        lib.zeros(0, dtype=lib.float64), lib.ones(4, 3, 1, dtype=lib.float64)))


def test_kl_div_loops_under_vmap_but_not_when_differentiated_as_pytorch(torch):
    """PyTorch has no batching rule for kl_div (vmap warns), but a transform that differentiates it inside vmap
    runs its composition of batched ops, and jacfwd batches only its tangents: no warning there."""
    x = RNG.standard_normal((3, 4))

    def f(lib):
        return lambda v: lib.nn.functional.kl_div(v, v.exp(), reduction="batchmean")
    transforms = {"vmap": lambda lib, g: lib.vmap(g), "jacfwd": lambda lib, g: lib.func.jacfwd(g),
                  "vmap(grad)": lambda lib, g: lib.vmap(lib.func.grad(g)),
                  "vmap(jacrev)": lambda lib, g: lib.vmap(lib.func.jacrev(g))}
    for name, transform in transforms.items():
        def run(lib, transform=transform):
            return lambda: transform(lib, f(lib))(lib.tensor(x))
        assert _warnings_of(run(minigrad)) == _warnings_of(run(torch)), name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            both(torch, lambda lib: run(lib)())
