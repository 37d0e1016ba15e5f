"""minigrad.func against torch.func (PyTorch 2.13): values, shapes, dtypes and errors of every transform and
option, with inputs made with NumPy and given to both libraries."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4,))
C = RNG.standard_normal((2, 4))
M = RNG.standard_normal((4, 4))


def _np(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_np(v) for v in x)
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if hasattr(x, "detach"):
        return x.detach().numpy()
    return x


def _same(got, want):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _same(got[k], want[k])
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.shape == want.shape and got.dtype == want.dtype, (got, want)
        rtol, atol = (1e-9, 1e-12) if want.dtype == np.float64 else (1e-5, 1e-6)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    else:
        assert got == want


def both(torch, program):
    """program(lib) run on torch and on minigrad; the results (pytrees of tensors) agree."""
    want = _np(program(torch))
    got = _np(program(minigrad))
    _same(got, want)
    return got


def errors_alike(torch, program, phrase=None):
    """program(lib) raises the same exception type and message (or `phrase`) in both libraries."""
    with pytest.raises(Exception) as want:
        program(torch)
    with pytest.raises(Exception) as got:
        program(minigrad)
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)
    text = str(want.value) if phrase is None else phrase
    assert text.replace("torch", "minigrad") in str(got.value) or text in str(got.value), (got.value, want.value)


def t(lib, a, requires_grad=False):
    return lib.tensor(a, requires_grad=requires_grad)


def f_cubic(lib):
    return lambda x: (x ** 3).sin().sum()


def f_two(lib):
    return lambda x, y: (x * y.exp()).tanh().sum() + (x ** 2).mean()


# -- grad, grad_and_value -------------------------------------------------------------------------------------
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,), -1])
def test_grad_argnums(torch, argnums):
    both(torch, lambda lib: lib.func.grad(f_two(lib), argnums=argnums)(t(lib, A), t(lib, B)))


def test_grad_and_value_has_aux(torch):
    def program(lib):
        def f(x, y):
            return (x * y).sum(), {"mean": x.mean(), "twice": (2 * y,)}
        return lib.func.grad_and_value(f, argnums=(0, 1), has_aux=True)(t(lib, A), t(lib, B))
    both(torch, program)


def test_grad_of_grad_and_closure(torch):
    def program(lib):
        g = lib.func.grad(lambda x: lib.func.grad(f_cubic(lib))(x).sum())
        w = t(lib, B)
        inner = lib.func.grad(lambda x: lib.func.grad(lambda y: (x * y * y).sum())(x).sum())  # x closed over
        return g(t(lib, B)), inner(w), lib.func.grad(lambda x: x.sum())(t(lib, A)).dtype == lib.float64
    both(torch, program)


def test_grad_pytree_input(torch):
    both(torch, lambda lib: lib.func.grad(lambda d: (d["a"] * d["b"][0]).sum())(
        {"a": t(lib, B), "b": [t(lib, B ** 2)]}))


def test_grad_result_does_not_require_grad_and_float32(torch):
    def program(lib):
        g = lib.func.grad(lambda x: (x * x).sum())(lib.tensor(B, dtype=lib.float32))
        return g, g.requires_grad
    both(torch, program)


def test_grad_under_outer_autograd(torch):
    def program(lib):
        x = t(lib, B, requires_grad=True)
        g = lib.func.grad(f_cubic(lib))(x)
        (h,) = lib.autograd.grad(g.sum(), x)
        return g.requires_grad, h
    both(torch, program)


def test_grad_unused_input_is_zero(torch):
    both(torch, lambda lib: lib.func.grad(lambda x, y: x.sum(), argnums=1)(t(lib, B), t(lib, A)))


@pytest.mark.parametrize("case", [
    lambda lib: lib.func.grad(lambda x: x)(t(lib, B)),
    lambda lib: lib.func.grad(lambda x: 3.0)(t(lib, B)),
    lambda lib: lib.func.grad(lambda x: (x, x))(t(lib, B)),
    lambda lib: lib.func.grad(lambda x: x.sum(), has_aux=True)(t(lib, B)),
    lambda lib: lib.func.grad(lambda x: x.sum(), argnums=1)(t(lib, B)),
    lambda lib: lib.func.grad(lambda x: x.sum(), argnums=(0, 0))(t(lib, B)),
    lambda lib: lib.func.grad(lambda x: x.sum(), argnums=())(t(lib, B)),
    lambda lib: lib.func.grad(lambda x: x.sum(), argnums=1.0)(t(lib, B)),
    lambda lib: lib.func.grad(lambda x: x.sum())(3.0),
], ids=["vector", "float", "tuple", "aux", "argnum", "unique", "empty", "type", "not-tensor"])
def test_grad_errors(torch, case):
    errors_alike(torch, case)


# -- vjp ------------------------------------------------------------------------------------------------------
def test_vjp_values_twice_and_aux(torch):
    def program(lib):
        out, fn = lib.func.vjp(lambda x, y: ((x * y).sin(), (x ** 2).sum(-1)), t(lib, A), t(lib, B))
        cot = (t(lib, A), t(lib, A[:, 0]))
        return out, fn(cot), fn(cot)
    both(torch, program)
    both(torch, lambda lib: lib.func.vjp(lambda x: (x.exp(), x.mean()), t(lib, B), has_aux=True)[2])


@pytest.mark.parametrize("case", [
    lambda lib: lib.func.vjp(lambda x: x, t(lib, B))[1](lib.ones(5, dtype=lib.float64)),
    lambda lib: lib.func.vjp(lambda x: 3, t(lib, B)),
], ids=["shape", "not-tensor"])
def test_vjp_errors(torch, case):
    errors_alike(torch, case)


# -- jacrev ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacrev(torch, argnums):
    both(torch, lambda lib: lib.func.jacrev(lambda x, y: (x @ y).tanh() * 2, argnums=argnums)(t(lib, A), t(lib, B)))


def test_jacrev_outputs_tree_and_aux(torch):
    both(torch, lambda lib: lib.func.jacrev(lambda x: ({"s": x.sin(), "m": (x @ x.T)}, x.sum()), has_aux=True)(
        t(lib, C)))


def test_jacrev_of_jacrev_is_the_hessian(torch):
    both(torch, lambda lib: lib.func.jacrev(lib.func.jacrev(f_cubic(lib)))(t(lib, B)))


def test_jacrev_errors(torch):
    errors_alike(torch, lambda lib: lib.func.jacrev(lambda x: 3)(t(lib, B)))
    errors_alike(torch, lambda lib: lib.func.jacrev(lambda x: x, argnums=2)(t(lib, B)))
    errors_alike(torch, lambda lib: lib.func.jacrev(lambda x: x)(3.0))


# -- vmap ------------------------------------------------------------------------------------------------------
def mlp(lib, x, w):
    return (x @ w).tanh().sum(-1) + lib.nn.functional.mse_loss(x, x.flip(0) if x.dim() else x)


@pytest.mark.parametrize("in_dims,shapes", [(0, ((3, 4), (3, 4))), (1, ((4, 3), (4, 3))), ((0, None), ((3, 4), (4,))),
                                            ((None, 1), ((4,), (4, 3))), (-1, ((4, 3), (4, 3)))])
def test_vmap_in_dims(torch, in_dims, shapes):
    a, b = (RNG.standard_normal(s) for s in shapes)
    both(torch, lambda lib: lib.vmap(lambda x, y: (x * y).exp() - x.sum() / y.norm(), in_dims=in_dims)(
        t(lib, a), t(lib, b)))


@pytest.mark.parametrize("out_dims", [0, 1, -1, (0, 1)])
def test_vmap_out_dims(torch, out_dims):
    data = RNG.standard_normal((5, 2, 2))
    both(torch, lambda lib: lib.vmap(lambda x: (x.sin(), x.T @ x), out_dims=out_dims)(t(lib, data)))


def test_vmap_nested_and_pytrees(torch):
    data = RNG.standard_normal((2, 3, 4))

    def program(lib):
        f = lib.vmap(lib.vmap(lambda d, s: {"p": d["x"] @ d["w"], "q": [d["x"].sum() * s]},
                              in_dims=({"x": 0, "w": None}, None)),
                     in_dims=({"x": 1, "w": None}, 0))
        return f({"x": t(lib, data), "w": t(lib, M)}, t(lib, A[:, 0]))
    both(torch, program)


def test_vmap_unbatched_output_is_expanded(torch):
    both(torch, lambda lib: lib.vmap(lambda x, y: y * 2, in_dims=(0, None))(t(lib, A), t(lib, B)))


OPS = {
    "reductions": lambda lib, x: (x.sum(), x.mean(0), x.amax(-1), x.softmax(-1), x.log_softmax(0), x.max(),
                                  x.argmax(), x.std(), x.logsumexp(1), x.max(dim=1).values, x.cumsum(0)),
    "views": lambda lib, x: (x.reshape(-1), x.view(2, 6), x.flatten(), x.unsqueeze(1), x.T, x.t(), x.transpose(0, 1),
                             x.permute(1, 0), x.movedim(0, 1), x[1], x[:, 1:3], x[..., None], x.expand(2, 3, 4),
                             x.squeeze(), x.unbind(1), x.mT),
    "joining": lambda lib, x: (lib.cat([x, x * 2], 1), lib.stack([x, x.exp()]), x.split(2, 1), x.chunk(3, 0)),
    "matmul": lambda lib, x: (x @ x.T, x[0] @ x.T, x @ x[0], x[0] @ x[0], lib.matmul(x.T, x),
                              lib.nn.functional.linear(x, x, x[:, 0])),
    "elementwise": lambda lib, x: (lib.where(x > 0, x, -x), x.clamp(-0.5, 0.5), lib.maximum(x, x.flip(0)), x.relu(),
                                   x.sigmoid(), abs(x), -x, 2 ** x, 1 - x, x / 3),
    "losses": lambda lib, x: (lib.nn.functional.mse_loss(x, x.sin()), lib.nn.functional.cross_entropy(
        x, lib.tensor([0, 2, 1])), lib.nn.functional.nll_loss(x.log_softmax(1), lib.tensor([3, 1, 0]),
                                                              reduction="sum"),
        lib.nn.functional.l1_loss(x, x * 0, reduction="none")),
}


@pytest.mark.parametrize("family", OPS)
def test_vmap_batching_rules(torch, family):
    """Each family's rule gives per-sample results equal to torch.func.vmap's, without the loop's warning."""
    data = RNG.standard_normal((5, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        both(torch, lambda lib: lib.vmap(lambda x: OPS[family](lib, x))(t(lib, data)))


def test_vmap_of_closure_tensor_and_plain_operand(torch):
    both(torch, lambda lib: lib.vmap(lambda x: t(lib, B) * x + t(lib, M) @ x)(t(lib, A)))


def test_vmap_fallback_loops_with_pytorchs_warning():
    x = minigrad.tensor(A)
    with pytest.warns(UserWarning, match="There is a performance drop because we have not yet implemented the "
                                         "batching rule for"):
        got = minigrad.vmap(lambda v: minigrad.nn.functional.kl_div(v, v * 2, reduction="none"))(x)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(got.numpy(), 2 * A * (np.log(2 * A) - A), rtol=1e-12)


@pytest.mark.parametrize("case", [
    lambda lib: lib.vmap(lambda x: x.sum().item())(t(lib, B)),
    lambda lib: lib.vmap(lambda x: x, in_dims=(0, 0))(t(lib, B)),
    lambda lib: lib.vmap(lambda x: x, in_dims=1)(t(lib, B)),
    lambda lib: lib.vmap(lambda x, y: x, in_dims=0)(t(lib, B), t(lib, A[0, :3])),
    lambda lib: lib.vmap(lambda x: x, in_dims=0)(3.0),
    lambda lib: lib.vmap(lambda x: x, in_dims=None)(t(lib, B)),
    lambda lib: lib.vmap(lambda x: x, in_dims=[0])(t(lib, B)),
    lambda lib: lib.vmap(lambda x: 3.0)(t(lib, B)),
    lambda lib: lib.vmap(lambda x: x)(),
    lambda lib: lib.vmap(lambda x: x)(t(lib, 1.0)),
    lambda lib: lib.vmap(lambda x: x, randomness="foo")(t(lib, B)),
    lambda lib: lib.vmap(lambda x, y: x, in_dims=(None, None))(t(lib, B), t(lib, B)),
    lambda lib: lib.vmap(lambda x: x, out_dims=None)(t(lib, B)),
    lambda lib: lib.vmap(lambda x: x, in_dims=(0.5,))(t(lib, B)),
    lambda lib: lib.vmap(lambda x: x, chunk_size=0)(t(lib, B)),
], ids=["item", "in_dims-structure", "in_dim-range", "sizes", "non-tensor", "none", "list", "returns-float",
        "no-inputs", "0-d", "randomness", "nothing-batched", "out_dims-none", "in_dim-type", "chunk_size"])
def test_vmap_errors(torch, case):
    errors_alike(torch, case, phrase=None)


# -- composition -------------------------------------------------------------------------------------------------
def test_vmap_of_grad_per_sample_gradients(torch):
    def program(lib):
        def loss(w, x, y):
            return ((x @ w).tanh() - y) ** 2
        return lib.vmap(lib.func.grad(lambda w, x, y: loss(w, x, y).sum()), in_dims=(None, 0, 0))(
            t(lib, M), t(lib, A), t(lib, A[:, :4]))
    both(torch, program)


def test_vmap_of_jacrev_and_vjp(torch):
    both(torch, lambda lib: lib.vmap(lib.func.jacrev(lambda x: (x.sin() * x.sum()).exp()))(t(lib, A)))
    both(torch, lambda lib: lib.vmap(lambda x, c: lib.func.vjp(lambda z: z.tanh() @ t(lib, M), x)[1](c))(
        t(lib, A), t(lib, A[::-1].copy())))


def test_grad_of_vmap(torch):
    both(torch, lambda lib: lib.func.grad(lambda w: lib.vmap(lambda x: (x * w).sin().sum())(t(lib, A)).sum())(
        t(lib, B)))


def test_jacrev_of_vmap_nested(torch):
    both(torch, lambda lib: lib.func.jacrev(lambda w: lib.vmap(lib.vmap(lambda x: x * w.sum()))(t(lib, A) * w))(
        t(lib, B)))


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data())
def test_vmap_drawn_shapes_and_in_dims(torch, shape, data):
    in_dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    out_dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    both(torch, lambda lib: lib.vmap(lambda v: (v.exp() * v.sum() - v.mean(0, keepdim=True) if v.dim() else v.exp()),
                                     in_dims=in_dim, out_dims=out_dim)(t(lib, x)))


# -- functional_call, stack_module_state -----------------------------------------------------------------------
class _Tied:
    @staticmethod
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(2, 2, dtype=lib.float64)
                self.b = lib.nn.Linear(2, 2, dtype=lib.float64)
                self.b.weight = self.a.weight
                self.register_buffer("buf", lib.ones(2, dtype=lib.float64))

            def forward(self, x):
                return self.b(self.a(x)) + self.buf
        m = M()
        with lib.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1)))
        return m


def test_functional_call_buffers_tied_weights_and_dicts(torch):
    def program(lib):
        m = _Tied.make(lib)
        x = t(lib, np.array([0.5, -1.0]))
        eye = lib.eye(2, dtype=lib.float64)
        return (lib.func.functional_call(m, {"a.weight": eye}, (x,)),
                lib.func.functional_call(m, {"a.weight": eye, "b.weight": 2 * eye}, (x,), tie_weights=False),
                lib.func.functional_call(m, ({"a.weight": eye}, {"buf": x}), x),
                lib.func.functional_call(m, {}, (), {"x": x}), m(x))
    both(torch, program)


@pytest.mark.parametrize("case", [
    lambda lib, m, e: lib.func.functional_call(m, {"a.weight": e, "b.weight": 2 * e}, (e[0],)),
    lambda lib, m, e: lib.func.functional_call(m, {"a.weight": e}, (e[0],), strict=True),
    lambda lib, m, e: lib.func.functional_call(m, {"zz": e}, (e[0],), strict=True),
    lambda lib, m, e: lib.func.functional_call(m, ({"a.weight": e}, {"a.weight": e}), (e[0],)),
], ids=["tied", "missing", "unexpected", "twice"])
def test_functional_call_errors(torch, case):
    errors_alike(torch, lambda lib: case(lib, _Tied.make(lib), lib.eye(2, dtype=lib.float64)))


def test_stack_module_state(torch):
    def program(lib):
        models = [lib.nn.Linear(2, 3, dtype=lib.float64) for _ in range(3)]
        with lib.no_grad():
            for i, m in enumerate(models):
                m.weight.copy_(lib.tensor(np.full((3, 2), float(i))))
                m.bias.copy_(lib.tensor(np.arange(3.0) * i))
        p, b = lib.func.stack_module_state(models)
        run = lib.vmap(lambda p, x: lib.func.functional_call(models[0], p, (x,)), in_dims=(0, None))
        out = run(p, t(lib, C[:, :2]))
        return p, b, {k: (v.requires_grad, v.is_leaf) for k, v in p.items()}, out
    both(torch, program)
    errors_alike(torch, lambda lib: lib.func.stack_module_state([]))
    errors_alike(torch, lambda lib: lib.func.stack_module_state([lib.nn.Linear(1, 1), lib.nn.Linear(1, 1).eval()]))


@pytest.mark.parametrize("in_dims", [(0, 0, 0), (None, 0, 0), (0, None, None), (0, 0, None)])
@pytest.mark.parametrize("sample", [(2, 3, 6, 6), (3, 6, 6)])
def test_vmap_conv2d_batched_and_unbatched_weights(torch, in_dims, sample):
    """The grouped-convolution rule (batched weights) and the folded one (unbatched weights), with no loop."""
    x = RNG.standard_normal((4,) + sample if in_dims[0] == 0 else sample)
    w = RNG.standard_normal((4, 5, 3, 2, 2) if in_dims[1] == 0 else (5, 3, 2, 2))
    b = RNG.standard_normal((4, 5) if in_dims[2] == 0 else (5,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        both(torch, lambda lib: lib.vmap(lambda x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1),
                                         in_dims=in_dims)(t(lib, x), t(lib, w), t(lib, b)))


def test_vmap_of_a_vjp_fn_recorded_outside(torch):
    """The tutorial's `vmap(vjp_fn)(unit_vectors)`: a batch of cotangents for a graph recorded outside vmap."""
    def program(lib):
        _, fn = lib.func.vjp(lambda x, w: (x @ w).tanh(), t(lib, A), t(lib, M))
        rows = lib.vmap(fn)(lib.tensor(np.stack([A, 2 * A, -A])))
        inner = lib.vmap(lambda x: lib.vmap(lib.func.vjp(lambda z: z.sin() * x.sum(), x)[1])(
            lib.eye(4, dtype=lib.float64)))(t(lib, A))
        return rows, inner
    both(torch, program)


def test_vmap_like_factories_dot_outer_and_randomness(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        both(torch, lambda lib: lib.vmap(lambda v: (lib.zeros_like(v), lib.ones_like(v) + v, lib.full_like(v, 2.0),
                                                    lib.dot(v, v), lib.outer(v, v)))(t(lib, A)))
    errors_alike(torch, lambda lib: lib.vmap(lambda v: lib.randn_like(v))(t(lib, A)))
    assert minigrad.vmap(lambda v: minigrad.randn_like(v), randomness="different")(t(minigrad, A)).shape == (3, 4)


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data())
def test_drawn_jacrev_and_per_sample_grad(torch, shape, data):
    """jacrev of a drawn-shape function, and vmap(grad) over a drawn batch dim, against torch.func."""
    in_dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(sum(shape)).standard_normal(shape)

    def f(v):
        return (v.sin() * v.sum()).tanh()

    both(torch, lambda lib: lib.func.jacrev(f)(t(lib, x)))
    both(torch, lambda lib: lib.vmap(lib.func.grad(lambda v: f(v).sum()), in_dims=in_dim)(t(lib, x)))
