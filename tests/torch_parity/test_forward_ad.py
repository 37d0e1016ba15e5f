"""minigrad.autograd.forward_ad against torch.autograd.forward_ad (2.13): levels, make_dual / unpack_dual, their
errors, tangents through views and in-place ops, and no node recorded for dual tensors that do not require
grad. Inputs are built with NumPy and handed to both libraries."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad
import minigrad.autograd.forward_ad as fwAD

X = np.array([0.5, -1.25, 2.0])
V = np.array([1.0, 0.25, -0.5])


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the test compares exception types
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", ["nested", "size", "int_tangent", "int_primal", "twice", "no_level"])
def test_errors_as_torch(torch, case):
    def run(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor(X)
        if case == "no_level":
            return _error(lambda: fw.make_dual(x, lib.tensor(V)))
        with fw.dual_level():
            if case == "nested":
                return _error(fw.enter_dual_level)
            if case == "size":
                return _error(lambda: fw.make_dual(x, lib.tensor(V[:2])))
            if case == "int_tangent":
                return _error(lambda: fw.make_dual(x, lib.tensor([1, 2, 3])))
            if case == "int_primal":
                return _error(lambda: fw.make_dual(lib.tensor([1, 2, 3]), lib.tensor(V)))
            d = fw.make_dual(x, lib.tensor(V))
            return _error(lambda: fw.make_dual(d, lib.tensor(V)))
    ours, theirs = run(minigrad), run(torch)
    assert ours is not None and ours[0] == theirs[0]
    assert ours[1] == theirs[1].replace("torch.", "minigrad.")


def test_make_dual_is_a_view_and_unpack_gives_the_tangent_as_is(torch):
    for lib in (minigrad, torch):
        fw = lib.autograd.forward_ad
        x, v = lib.tensor(X), lib.tensor(V)
        with fw.dual_level() as level:
            assert level == 0
            d = fw.make_dual(x, v)
            assert d._base is x and d.grad_fn is None and not d.requires_grad
            primal, tangent = fw.unpack_dual(d)
            assert tangent is v and primal._base is x
            assert fw.unpack_dual(x).tangent is None
        assert fw.unpack_dual(d).tangent is None  # the level's tangents are gone with it


def test_no_node_for_dual_tensors_that_do_not_require_grad():
    with fwAD.dual_level():
        d = fwAD.make_dual(minigrad.tensor(X), minigrad.tensor(V))
        y = (d.sin() * d).exp().sum()
        assert y.grad_fn is None and not y.requires_grad
        assert fwAD.unpack_dual(y).tangent.grad_fn is None


def test_tangent_computed_in_the_forward_pass_matches_torch(torch):
    def run(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(X), lib.tensor(V))
            y = (d.tanh() * d[[2, 0, 1]] / (1 + d * d)).softmax(0).log()
            return fw.unpack_dual(y).tangent.numpy()
    np.testing.assert_allclose(run(minigrad), run(torch), rtol=1e-9, atol=1e-12)


def test_views_and_in_place_ops_as_torch(torch):
    def run(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            base = lib.zeros(2, 3, dtype=lib.float64)
            row = base[1]
            row.copy_(fw.make_dual(lib.tensor(X), lib.tensor(V)))  # the view's tangent writes into the base's
            base.mul_(2.0)
            col = base[:, 0]
            col.exp_()
            t_base = fw.unpack_dual(base).tangent
            t_row = fw.unpack_dual(base[1]).tangent
            return base.numpy(), t_base.numpy(), t_row.numpy()
    for ours, theirs in zip(run(minigrad), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_repr_shows_the_tangent(torch):
    def run(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(X), lib.tensor(V))
            return repr(d), repr(d.sum()), repr(d * 2)
    assert [r.replace("minigrad.", "torch.") for r in run(minigrad)] == list(run(torch))


def test_dual_level_returns_and_forward_over_requires_grad(torch):
    def run(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor(X, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor(V))
            y = (d * d.sin()).sum()
            tangent = fw.unpack_dual(y).tangent
            (g,) = lib.autograd.grad(tangent, x)  # reverse over forward: the tangent's own graph
            return type(d.grad_fn).__name__ if lib is torch else d.grad_fn.name(), tangent.item(), g.numpy()
    ours, theirs = run(minigrad), run(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-9, atol=1e-12)


def test_op_without_forward_rule_raises_pytorchs_error(torch):
    """PyTorch's text, first line and second, naming the kernel, for an op with no forward rule in either library:
    scaled_dot_product_attention on 4-D heads runs the fused CPU kernel, which has none."""
    messages = []
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 3, 4)) for _ in range(3))
    for lib in (torch, minigrad):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(q), lib.tensor(np.ones_like(q)))
            with pytest.raises(NotImplementedError) as info:
                lib.nn.functional.scaled_dot_product_attention(d, lib.tensor(k), lib.tensor(v))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "_scaled_dot_product_flash_attention_for_cpu" in messages[1]


# -- custom Functions: jvp, save_for_forward; gradcheck(check_forward_ad=True) ----------------------------------
def _functions(lib):
    class Scale(lib.autograd.Function):
        """x * y * k, with a jvp reading what save_for_forward kept."""

        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            ctx.forward_saw_tangent = lib.autograd.forward_ad.unpack_dual(x).tangent is not None
            return x * y * k

        @staticmethod
        def jvp(ctx, x_t, y_t, k_t):
            x, y = ctx.saved_tensors
            ctx.jvp_args = (type(x_t).__name__, type(y_t).__name__, k_t)
            return (x_t * y + x * y_t) * ctx.k

        @staticmethod
        def backward(ctx, g):
            return None, None, None

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class WrongJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            return g * 0 + 1

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * x.cos() * 2  # twice the true derivative

    return Scale, NoJvp, WrongJvp


def test_function_jvp_and_save_for_forward_as_torch(torch):
    def run(lib):
        Scale, NoJvp, _ = _functions(lib)
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(X), lib.tensor(V))
            out = Scale.apply(x, lib.tensor(V * 3), 2.0)
            ctx_facts = (out.grad_fn is None,)
            with pytest.raises(NotImplementedError) as info:
                NoJvp.apply(x)
            return fw.unpack_dual(out).tangent.numpy(), ctx_facts, str(info.value)
    ours, theirs = run(minigrad), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-9, atol=1e-12)
    assert ours[1:] == theirs[1:]


def _spy(lib) -> dict:
    """What a custom Function's forward and jvp are handed: x dual, y a plain tensor, k a number."""
    Scale, _, _ = _functions(lib)
    fw = lib.autograd.forward_ad
    seen = {}

    class Spy(Scale):
        @staticmethod
        def jvp(ctx, x_t, y_t, k_t):
            seen["args"] = (type(x_t).__name__, type(y_t).__name__, k_t, float(y_t.abs().sum()))
            seen["forward_saw_tangent"] = ctx.forward_saw_tangent
            return Scale.jvp(ctx, x_t, y_t, k_t)

    with fw.dual_level():
        Spy.apply(fw.make_dual(lib.tensor(X), lib.tensor(V)), lib.tensor(V), 2.0)
    return seen


def test_function_forward_sees_no_tangent_and_jvp_gets_zeros_for_plain_tensors(torch):
    want = {"args": ("Tensor", "Tensor", None, 0.0), "forward_saw_tangent": False}
    assert _spy(minigrad) == _spy(torch) == want


def test_gradcheck_check_forward_ad_catches_a_wrong_jvp(torch):
    messages = []
    for lib in (minigrad, torch):
        _, _, WrongJvp = _functions(lib)
        x = lib.tensor(np.array([0.3, -0.7]), requires_grad=True)
        with pytest.raises(Exception) as info:  # noqa: PT011 - its type is compared below, by name
            lib.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False)
        assert type(info.value).__name__ == "GradcheckError"
        messages.append(str(info.value).replace("torch.", "minigrad."))
        assert lib.autograd.gradcheck(lambda t: (t.tanh() * t).softmax(0), (x,), check_forward_ad=True)
    assert messages[0] == messages[1]
    assert messages[0].startswith("Jacobian computed with forward mode mismatch for output 0 with respect to input 0")


# -- autograd.functional: jacobian(strategy="forward-mode"), hessian(outer_jacobian_strategy="forward-mode") -------
def _f(a, b):
    return (a[:2, None] * b).tanh().sum(0), (a.exp() * a).softmax(0)


def test_jacobian_forward_mode_as_torch(torch):
    y = np.array([[0.5, 2.0], [1.0, -1.0]])
    ours = minigrad.autograd.functional.jacobian(_f, (minigrad.tensor(X), minigrad.tensor(y)), vectorize=True,
                                                 strategy="forward-mode")
    theirs = torch.autograd.functional.jacobian(_f, (torch.tensor(X), torch.tensor(y)), vectorize=True,
                                                strategy="forward-mode")
    for row_o, row_t in zip(ours, theirs):
        for o, t in zip(row_o, row_t):
            assert tuple(o.shape) == tuple(t.shape)
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{"strategy": "forward-mode"}, {"strategy": "fwd"}, {"strategy": "forward-mode",
                                    "vectorize": True, "create_graph": True}, {"strategy": "forward-mode",
                                    "vectorize": True, "strict": True}])
def test_jacobian_strategy_errors_as_torch(torch, kwargs):
    got = [_error(lambda lib=lib: lib.autograd.functional.jacobian(lambda a: a * 2, lib.tensor(X), **kwargs))
           for lib in (minigrad, torch)]
    assert got[0][0] == got[1][0] and got[0][1] == got[1][1].replace("torch.", "minigrad.")


def test_hessian_forward_over_reverse_as_torch(torch):
    def g(a):
        return (a.sin() * a.exp()).sum() + (a[0] * a[1]).tanh() + (a * a).sigmoid().prod()
    ours = minigrad.autograd.functional.hessian(g, minigrad.tensor(X), vectorize=True,
                                                outer_jacobian_strategy="forward-mode")
    theirs = torch.autograd.functional.hessian(g, torch.tensor(X), vectorize=True,
                                               outer_jacobian_strategy="forward-mode")
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-9, atol=1e-12)


# -- forward rules on the arguments the registry sweep does not draw ----------------------------------------------
def _dual_run(lib, fn, arrays: list, tangents: list):
    """(primal, tangent) arrays of fn's output, every input dual."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        out = fn(lib, *[fw.make_dual(lib.tensor(a), lib.tensor(t)) for a, t in zip(arrays, tangents)])
        primal, tangent = fw.unpack_dual(out)
        return primal.detach().numpy().copy(), tangent.detach().numpy().copy()


_RNG = np.random.default_rng(3)
SPECIAL = {
    "batch_norm of an empty batch (a clone)": (
        lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True), [np.zeros((0, 3))]),
    "batch_norm in eval, weight dual": (
        lambda lib, x, w: lib.nn.functional.batch_norm(x, lib.zeros(3, dtype=lib.float64),
                                                       lib.ones(3, dtype=lib.float64) * 2, w), [(4, 3), (3,)]),
    "nll_loss of (N, C, d) (views, then NllLoss2D)": (
        lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([[0, 2], [1, 1]])), [(2, 4, 2)]),
    "nll_loss reduction='none'": (
        lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([0, 2, 1]), reduction="none"), [(3, 4)]),
    "cross_entropy reduction='none'": (
        lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 2, 1]), reduction="none"), [(3, 4)]),
    "cross_entropy with class probabilities": (
        lambda lib, x, p: lib.nn.functional.cross_entropy(x, p), [(3, 4), (3, 4)]),
    "cumprod through zeros": (
        lambda lib, x: x.cumprod(1), [np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [1.0, 2.0, 0.0, 4.0, 5.0]])]),
    "max_pool2d with return_indices": (
        lambda lib, x: lib.nn.functional.max_pool2d(x, 2, return_indices=True)[0], [(1, 4, 4)]),
    "conv1d padding='same' (an even kernel pads first)": (
        lambda lib, x, w: lib.nn.functional.conv1d(x, w, padding="same"), [(1, 2, 5), (3, 2, 2)]),
    "index_fill with a 0-d tensor value": (
        lambda lib, x, v: x.index_fill(1, lib.tensor([0, 2]), v), [(2, 3), np.array(0.7)]),
    "F.pad with a value (the border's tangent is 0)": (
        lambda lib, x: lib.nn.functional.pad(x, (1, 2, 0, 1), value=3.0), [(2, 2)]),
    "attention's math path, causal": (
        lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
        [(3, 4), (3, 4), (3, 2)]),
    "matmul of a vector and a batch": (lambda lib, a, b: a @ b, [(3,), (2, 3, 4)]),
    "layer_norm without affine": (lambda lib, x: lib.nn.functional.layer_norm(x, (3, 4)), [(2, 3, 4)]),
    "mse_loss reduction='none', the target broadcast": (
        lambda lib, x, y: lib.nn.functional.mse_loss(x, y, reduction="none"), [(3, 4), (1, 4)]),
    "smooth_l1_loss, the target broadcast": (
        lambda lib, x, y: lib.nn.functional.smooth_l1_loss(x, y, beta=0.5), [(3, 4), (4,)]),
}


@pytest.mark.parametrize("case", sorted(SPECIAL))
def test_forward_rules_on_special_arguments(torch, case):
    fn, specs = SPECIAL[case]
    arrays = [s if isinstance(s, np.ndarray) else _RNG.standard_normal(s) for s in specs]
    tangents = [_RNG.uniform(-1, 1, a.shape) for a in arrays]
    with warnings.catch_warnings():  # (a broadcast target, an even kernel's 'same' padding: both warn, as tested
        warnings.simplefilter("ignore", UserWarning)  # in tests/nn; under a level, below)
        theirs = _dual_run(torch, fn, arrays, tangents)
        ours = _dual_run(minigrad, fn, arrays, tangents)
    for mine, want in zip(ours, theirs):
        assert mine.shape == want.shape and mine.dtype == want.dtype
        np.testing.assert_allclose(mine, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", ["var", "mse_loss"])
def test_an_op_under_a_dual_level_warns_as_pytorchs(torch, case):
    """The op's own warning, as a learner sees it (Python's default filter: once per place), and no NumPy warning
    from its forward rule (nan tangents, silently). (Under an "always" filter minigrad shows it twice: the op also
    runs on stand-ins to read its rule.)"""
    texts = []
    for lib in (torch, minigrad):
        fw = lib.autograd.forward_ad
        with warnings.catch_warnings(record=True) as caught, fw.dual_level():
            warnings.simplefilter("default")
            x = fw.make_dual(lib.tensor(np.ones((3, 4))), lib.tensor(np.ones((3, 4))))
            out = x[:1].var(0) if case == "var" else lib.nn.functional.mse_loss(x, lib.tensor(np.ones(4)))
            assert fw.unpack_dual(out).tangent is not None
        texts.append([str(w.message).split(" (Triggered")[0].replace("torch.", "minigrad.") for w in caught
                      if "jit" not in str(w.message)])
    assert texts[1] == texts[0] and len(texts[1]) == 1
