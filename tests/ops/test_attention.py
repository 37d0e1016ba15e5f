"""F.scaled_dot_product_attention and torch._safe_softmax beyond the registry sweeps' samples, against PyTorch 2.13:
which path PyTorch takes (its fused CPU kernel for 4-D heads, the math path otherwise) and so which nodes and saved
values the graph shows, masks that hide whole rows, broadcast masks, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import B, F, Int, K

import minigrad

ROWS_MASKED = np.array([[True, True, False, True, False], [False] * 5, [True] * 5])


def _sdpa(**kwargs):
    def fn(lib, q, k, v, *mask):
        extra = {"attn_mask": mask[0]} if mask else {}
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, **extra, **kwargs)
    return fn


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"scale": 0.25}], ids=["plain", "causal", "scale"])
def test_fused_path_for_heads_matches_torch(parity, dtype, kwargs):
    parity.check(_sdpa(**kwargs), F(2, 3, 4, 8, dtype=dtype), F(2, 3, 6, 8, dtype=dtype), F(2, 3, 6, 8, dtype=dtype))


@pytest.mark.parametrize("shapes", [((3, 4), (5, 4), (5, 2)), ((2, 3, 4), (2, 5, 4), (2, 5, 4)),
                                    ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6)),
                                    ((2, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4))],
                         ids=["2d", "3d", "other value dim", "broadcast batch"])
def test_math_path_matches_torch(parity, shapes):
    parity.check(_sdpa(is_causal=True), *(F(*s) for s in shapes))


@pytest.mark.parametrize("mask_shape", [(3, 5), (2, 1, 3, 5)], ids=["one mask", "per sample"])
def test_boolean_masks_that_hide_whole_rows_give_zeros(parity, mask_shape):
    mask = np.broadcast_to(ROWS_MASKED, mask_shape).copy()
    out, mine = parity.check(_sdpa(), F(2, 2, 3, 4), F(2, 2, 5, 4), F(2, 2, 5, 4), K(mask))
    assert not np.isnan(mine.detach().numpy()).any() and (mine.detach().numpy()[:, :, 1] == 0).all()
    parity.check(_sdpa(), F(3, 4), F(5, 4), F(5, 4), K(ROWS_MASKED))  # the math path: _safe_softmax


def test_float_mask_that_requires_grad_takes_the_math_path(parity):
    parity.check(_sdpa(), F(2, 2, 3, 4), F(2, 2, 5, 4), F(2, 2, 5, 4), F(3, 5))


def test_second_order_through_the_math_path(parity):
    parity.check(_sdpa(is_causal=True), F(2, 3, 4), F(2, 3, 4), F(2, 3, 4), second_order=True)


def test_safe_softmax_matches_torch_on_rows_of_minus_inf(parity):
    x = np.array([[1.0, 2.0, -np.inf], [-np.inf] * 3, [0.5, -1.0, 3.0]])
    parity.check(lambda lib, t: lib._safe_softmax(t, -1), K(x, grad=True))


def test_dropout_goes_through_the_math_path_with_a_mul_node():
    x = minigrad.randn(2, 2, 3, 4, requires_grad=True)
    minigrad.manual_seed(0)
    out = minigrad.nn.functional.scaled_dot_product_attention(x, x, x, dropout_p=0.5)
    names, fn = [], out.grad_fn
    while fn is not None:
        names.append(type(fn).__name__)
        fn = fn.next_functions[0][0] if fn.next_functions else None
    assert names[:5] == ["UnsafeViewBackward0", "BmmBackward0", "ViewBackward0", "ExpandBackward0", "MulBackward0"]
    assert names[5] == "SafeSoftmaxBackward0"
    out.sum().backward()
    assert x.grad.shape == x.shape


@pytest.mark.parametrize(("fn", "specs"), [
    (_sdpa(is_causal=True), (F(3, 4), F(5, 4), F(5, 4), B(3, 5))),
    (_sdpa(), (F(3, 4), F(5, 4, dtype="float32"), F(5, 4))),
    (_sdpa(), (F(4), F(4), F(4))),
    (_sdpa(), (F(3, 4), F(5, 4), F(5, 4), Int(3, 5))),
    (_sdpa(), (F(3, 4, dtype="float32"), F(5, 4, dtype="float32"), F(5, 4, dtype="float32"), F(3, 5))),
    (_sdpa(), (F(2, 3, 4), F(2, 5, 4), F(2, 5, 4), B(4, 2, 3, 5))),
], ids=["causal and mask", "dtypes", "1d", "int mask", "double mask", "mask grows the scores"])
def test_errors_match_torch(parity, fn, specs):
    parity.error(fn, *specs)


# -- index_select and repeat_interleave (d2l's masked_softmax repeats valid lengths with it) -----------------------
@pytest.mark.parametrize(("args", "shape"), [((2,), (2, 3)), ((2, 1), (2, 3)), ((2, 0), (2, 3)), ((3,), (4,)),
                                             ((K(np.array([1, 2])), 0), (2, 3)), ((K(np.array([2])), 1), (2, 3)),
                                             ((K(np.array([1, 0, 2, 1, 1, 3])),), (2, 3))],
                         ids=["flat", "dim 1", "dim 0", "1-d", "counts", "one count", "counts, flat"])
def test_repeat_interleave_matches_torch(parity, args, shape):
    tensors = [a for a in args if not isinstance(a, int)]
    ints = [a for a in args if isinstance(a, int)]

    def fn(lib, x, *counts):
        return x.repeat_interleave(*counts, *ints) if counts else x.repeat_interleave(*ints)

    parity.check(fn, F(*shape), *tensors, second_order=True)


def test_repeat_interleave_of_counts_alone_and_index_select(parity):
    parity.check(lambda lib, c: lib.repeat_interleave(c), K(np.array([2, 0, 3])))
    parity.check(lambda lib, x, i: lib.index_select(x, 0, i), F(3, 4), K(np.array([2, 0, 2, 1])), second_order=True)


@pytest.mark.parametrize(("fn", "specs"), [
    (lambda lib, x: x.repeat_interleave(-1), (F(2, 3),)),
    (lambda lib, x, c: x.repeat_interleave(c, 0), (F(2, 3), K(np.array([1, 2, 3])))),
    (lambda lib, x, i: x.index_select(0, i), (F(2, 3), K(np.array([5])))),
    (lambda lib, x, i: x.index_select(0, i), (F(2, 3), K(np.array([0.0])))),
], ids=["negative", "counts size", "out of range", "float index"])
def test_repeat_interleave_and_index_select_errors_match_torch(parity, fn, specs):
    parity.error(fn, *specs)
