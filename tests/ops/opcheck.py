"""Differential checking of minigrad against PyTorch, op by op (loaded by conftest.py as ``opcheck``).

``Parity.check(fn, *specs)`` runs ``fn(lib, *tensors)`` with ``lib`` = torch and = minigrad, the inputs
built from the same NumPy arrays for both, and compares, output by output: dtype, shape, values
(float64 rtol 1e-9 / atol 1e-12, float32 rtol 1e-5), ``requires_grad``, ``is_leaf``, ``output_nr``,
``_version``, the graph (``type(grad_fn).__name__``, ``name()``, ``next_functions`` recursively with
input_nr, ``None`` edges and which input each AccumulateGrad leaf holds); then it runs backward with a
NumPy-drawn upstream gradient and compares every input's ``.grad``. With ``second_order=True`` it
compares the first-order gradients (create_graph=True) and the gradients of a random projection of
them w.r.t. the inputs and the upstream gradients.

Input specs: ``F(*shape)`` float64 requiring grad; ``P(*shape)`` positive float64 requiring grad;
``C(*shape)`` float constant; ``Int(*shape)`` int64 constant; ``B(*shape)`` bool constant; ``K(array)``
exactly these values. Random values come from a generator seeded by the pytest node id.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import minigrad

# -- input specs ---------------------------------------------------------------------------------------


class Spec:
    """How to draw one input: `draw(rng)` returns (array, requires_grad)."""

    def __init__(self, shape=(), lo=-2.0, hi=2.0, dtype="float64", grad=True, array=None, away=0.0):
        self.shape, self.lo, self.hi, self.dtype, self.grad, self.array, self.away = (
            tuple(shape), lo, hi, np.dtype(dtype), grad, array, away)

    def draw(self, rng):
        if self.array is not None:
            arr = np.array(self.array, copy=True)
            if self.dtype.kind == "f" and arr.dtype.kind != "f":
                arr = arr.astype(self.dtype)
            return arr, self.grad and arr.dtype.kind == "f"
        if self.dtype.kind == "f":
            arr = rng.uniform(self.lo, self.hi, self.shape)
            if self.away:  # keep away from a kink at 0
                arr = np.where(np.abs(arr) < self.away, np.copysign(self.away, arr) * 2, arr)
            return arr.astype(self.dtype), self.grad
        if self.dtype.kind == "b":
            return rng.random(self.shape) < 0.5, False
        return rng.integers(int(self.lo), int(self.hi) + 1, self.shape).astype(self.dtype), False


def F(*shape, lo=-2.0, hi=2.0, dtype="float64", away=0.0):
    """A float input that requires grad."""
    return Spec(shape, lo, hi, dtype, True, away=away)


def P(*shape, lo=0.5, hi=2.0, dtype="float64"):
    """A positive float input that requires grad (log, sqrt, pow with tensor exponents)."""
    return Spec(shape, lo, hi, dtype, True)


def C(*shape, lo=-2.0, hi=2.0, dtype="float64"):
    """A float input that does not require grad."""
    return Spec(shape, lo, hi, dtype, False)


def Int(*shape, lo=-5, hi=5, dtype="int64"):
    """An integer input (never requires grad)."""
    return Spec(shape, lo, hi, dtype, False)


def B(*shape):
    """A bool input."""
    return Spec(shape, dtype="bool", grad=False)


def K(array, grad=False, dtype=None):
    """Exactly these values; `grad=True` makes a float input require grad."""
    arr = np.asarray(array) if dtype is None else np.asarray(array, dtype=dtype)
    return Spec(arr.shape, dtype=arr.dtype, grad=grad, array=arr)


# -- comparing -------------------------------------------------------------------------------------------

VIEW_NODES = {
    "SelectBackward0", "SliceBackward0", "ViewBackward0", "TransposeBackward0", "PermuteBackward0", "TBackward0",
    "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "ExpandBackward0",
    "UnbindBackward0", "SplitBackward0", "SplitWithSizesBackward0", "AliasBackward0", "AsStridedBackward0",
    "AsStridedBackward1",
}


def tol(dtype_name: str):
    """(rtol, atol) of the conventions: float64 1e-9/1e-12, float32 1e-5 (atol 1e-6 near zero)."""
    if dtype_name == "float64":
        return 1e-9, 1e-12
    return 1e-5, 1e-6


def dtype_name(t) -> str:
    return str(t.dtype).split(".")[-1]


def to_np(t) -> np.ndarray:
    if getattr(t, "_is_zerotensor", lambda: False)():  # PyTorch's efficient zeros (some second derivatives)
        return np.zeros(tuple(t.shape), dtype_name(t))
    return np.asarray(t.detach().numpy())


def norm_msg(msg: str) -> str:
    return msg.replace("torch::", "minigrad::").replace("torch.", "minigrad.")


def strip_hint(msg: str) -> str:
    lines = msg.split("\n")
    if len(lines) > 1 and lines[-1].startswith("hint:"):
        lines = lines[:-1]
    return "\n".join(lines)


class Parity:
    F, P, C, Int, B, K = staticmethod(F), staticmethod(P), staticmethod(C), staticmethod(Int), staticmethod(B), \
        staticmethod(K)

    def __init__(self, torch):
        self.torch = torch

    # -- building inputs ---------------------------------------------------------------------------------
    @staticmethod
    def rng_for(seed=None) -> np.random.Generator:
        if seed is None:
            seed = zlib.crc32(str(_current_test_id()).encode())
        return np.random.default_rng(seed)

    def draw(self, specs, rng):
        return [s.draw(rng) if isinstance(s, Spec) else s for s in specs]

    def build(self, lib, drawn):
        out = []
        for d in drawn:
            if isinstance(d, tuple):
                arr, rg = d
                t = lib.from_numpy(np.array(arr, copy=True))
                if rg:
                    t.requires_grad_(True)
                out.append(t)
            else:
                out.append(d)
        return out

    # -- the main check ----------------------------------------------------------------------------------
    def check(self, fn, *specs, backward=True, second_order=False, seed=None, rtol=None, atol=None,
              warns=False):
        """Run `fn` on both libraries and compare everything a learner can see (see the module doc)."""
        rng = self.rng_for(seed)
        drawn = self.draw(specs, rng)
        t_in = self.build(self.torch, drawn)
        m_in = self.build(minigrad, drawn)
        t_out = fn(self.torch, *t_in)
        m_out = fn(minigrad, *m_in)
        t_flat, m_flat = [], []
        self._compare_out(t_out, m_out, "out", t_flat, m_flat, rtol, atol)
        leaves = (t_in, m_in)
        for i, (to, mo) in enumerate(zip(t_flat, m_flat)):
            self.compare_graph(to.grad_fn, mo.grad_fn, leaves, f"out[{i}].grad_fn")
        for i, (ti, mi) in enumerate(zip(t_in, m_in)):  # in-place ops change their inputs
            if hasattr(ti, "grad_fn"):
                self.compare_tensor(ti, mi, f"input[{i}] after fn", rtol, atol)
                self.compare_graph(ti.grad_fn, mi.grad_fn, leaves, f"input[{i}].grad_fn")
        if not backward:
            return t_out, m_out
        pairs = [(to, mo) for to, mo in zip(t_flat, m_flat) if to.requires_grad]
        if not pairs:
            return t_out, m_out
        grads = [rng.standard_normal(tuple(to.shape)).astype(dtype_name(to)) for to, _ in pairs]
        if second_order:
            self._second_order(t_in, m_in, pairs, grads, rng, rtol, atol)
            return t_out, m_out
        self.torch.autograd.backward([to for to, _ in pairs], [self.torch.from_numpy(g.copy()) for g in grads])
        minigrad.autograd.backward([mo for _, mo in pairs], [minigrad.from_numpy(g.copy()) for g in grads])
        for i, (ti, mi) in enumerate(zip(t_in, m_in)):
            if hasattr(ti, "grad_fn") and ti.is_leaf:
                tg, mg = ti.grad, mi.grad
                assert (tg is None) == (mg is None), f"input[{i}].grad: torch {tg} minigrad {mg}"
                if tg is not None:
                    self.compare_tensor(tg, mg, f"input[{i}].grad", rtol, atol, graph=False)
        return t_out, m_out

    def _second_order(self, t_in, m_in, pairs, grads, rng, rtol, atol):
        """Gradients of <w, dL/dx> w.r.t. the inputs and the upstream gradients (both libraries)."""
        idx = [i for i, t in enumerate(t_in) if hasattr(t, "requires_grad") and t.requires_grad and t.is_leaf]
        results = []
        for lib, ins, outs in ((self.torch, t_in, [p[0] for p in pairs]), (minigrad, m_in, [p[1] for p in pairs])):
            ups = [lib.from_numpy(g.copy()).requires_grad_(True) for g in grads]
            firsts = lib.autograd.grad(outs, [ins[i] for i in idx], ups, create_graph=True, allow_unused=True)
            results.append((lib, ins, ups, firsts))
        weights = [rng.standard_normal(tuple(t_in[i].shape)) for i in idx]
        second = []
        for lib, ins, ups, firsts in results:
            total = None
            for g, w in zip(firsts, weights):
                if g is None or not g.requires_grad:
                    continue
                term = (g * lib.from_numpy(w.astype(dtype_name(g)))).sum()
                total = term if total is None else total + term
            wrt = [ins[i] for i in idx] + list(ups)
            if total is None:
                second.append([None] * len(wrt))
            else:
                second.append(lib.autograd.grad(total, wrt, allow_unused=True))
            second[-1] = [firsts, second[-1]]
        (t_first, t_second), (m_first, m_second) = second
        for k, (tg, mg) in enumerate(zip(t_first, m_first)):
            assert (tg is None) == (mg is None), f"first-order grad {k}: torch {tg} minigrad {mg}"
            if tg is not None:
                self.compare_tensor(tg, mg, f"first-order grad {k}", rtol, atol, graph=False)
        for k, (tg, mg) in enumerate(zip(t_second, m_second)):
            ta = np.zeros(0) if tg is None else to_np(tg)
            ma = np.zeros(0) if mg is None else to_np(mg)
            if tg is None and mg is None:
                continue
            shape = (tg if tg is not None else mg).shape
            ta = np.zeros(tuple(shape)) if tg is None else ta
            ma = np.zeros(tuple(shape)) if mg is None else ma
            r, a = tol(dtype_name(tg if tg is not None else mg))
            np.testing.assert_allclose(ma, ta, rtol=rtol or r, atol=atol or a,
                                       err_msg=f"second-order grad {k} (None counts as zeros)")

    # -- pieces ------------------------------------------------------------------------------------------
    def _compare_out(self, t, m, where, t_flat, m_flat, rtol, atol):
        torch = self.torch
        if isinstance(t, torch.Tensor):
            assert isinstance(m, minigrad.Tensor), f"{where}: minigrad returned {type(m).__name__}, not a Tensor"
            self.compare_tensor(t, m, where, rtol, atol)
            t_flat.append(t)
            m_flat.append(m)
        elif isinstance(t, torch.Size):
            assert isinstance(m, minigrad.Size) and tuple(t) == tuple(m), f"{where}: {t} vs {m}"
        elif isinstance(t, (tuple, list)):
            assert isinstance(m, (tuple, list)), f"{where}: minigrad returned {type(m).__name__}"
            assert type(t).__name__ == type(m).__name__, f"{where}: type {type(t).__name__} vs {type(m).__name__}"
            assert len(t) == len(m), f"{where}: {len(t)} vs {len(m)} items"
            if hasattr(t, "values") and hasattr(t, "indices"):
                assert m.values is m[0] and m.indices is m[1], f"{where}: named tuple fields"
            for k, (ti, mi) in enumerate(zip(t, m)):
                self._compare_out(ti, mi, f"{where}[{k}]", t_flat, m_flat, rtol, atol)
        else:
            assert type(t) is type(m), f"{where}: {type(t).__name__} vs {type(m).__name__}"
            if isinstance(t, float):
                np.testing.assert_allclose(m, t, rtol=1e-9, err_msg=where)
            else:
                assert t == m, f"{where}: torch {t!r} minigrad {m!r}"

    def compare_tensor(self, t, m, where, rtol=None, atol=None, graph=True):
        assert dtype_name(t) == dtype_name(m), f"{where}: dtype torch {t.dtype} minigrad {m.dtype}"
        assert tuple(t.shape) == tuple(m.shape), f"{where}: shape torch {tuple(t.shape)} minigrad {tuple(m.shape)}"
        ta, ma = to_np(t), to_np(m)
        if ta.dtype.kind == "f":
            r, a = tol(dtype_name(t))
            np.testing.assert_allclose(ma, ta, rtol=rtol or r, atol=atol or a, equal_nan=True,
                                       err_msg=f"{where}: values")
        else:
            np.testing.assert_array_equal(ma, ta, err_msg=f"{where}: values")
        if graph:
            assert t.requires_grad == m.requires_grad, f"{where}: requires_grad {t.requires_grad} vs {m.requires_grad}"
            assert t.is_leaf == m.is_leaf, f"{where}: is_leaf {t.is_leaf} vs {m.is_leaf}"
            assert t.output_nr == m.output_nr, f"{where}: output_nr {t.output_nr} vs {m.output_nr}"
            assert t._version == m._version, f"{where}: _version torch {t._version} minigrad {m._version}"

    def compare_graph(self, tn, mn, leaves, where, memo=None):
        """Same node class names, name(), next_functions (input_nr, None edges), leaves; recursively."""
        memo = {} if memo is None else memo
        if tn is None or mn is None:
            assert tn is None and mn is None, f"{where}: torch {_nm(tn)} minigrad {_nm(mn)}"
            return
        if id(tn) in memo:
            assert memo[id(tn)] is mn, f"{where}: {_nm(tn)} shared in torch's graph but not in minigrad's"
            return
        memo[id(tn)] = mn
        tname, mname = type(tn).__name__, type(mn).__name__
        if tname.startswith("AsStridedBackward"):
            # contract §3: the view's own node may keep its view name (PyTorch: AsStridedBackward0)
            assert mname in VIEW_NODES, f"{where}: torch AsStrided, minigrad {mname} (not a view node)"
            while type(mn).__name__ in VIEW_NODES:
                assert len(mn.next_functions) == 1, f"{where}: view node {type(mn).__name__} with several inputs"
                mn = mn.next_functions[0][0]
            self.compare_graph(tn.next_functions[0][0], mn, leaves, where + ".next[0]", memo)
            return
        assert tname == mname, f"{where}: torch {tname} minigrad {mname}"
        assert norm_msg(tn.name()) == mn.name(), f"{where}: name() torch {tn.name()} minigrad {mn.name()}"
        if tname == "AccumulateGrad":
            t_leaves, m_leaves = leaves
            ti = next((k for k, x in enumerate(t_leaves) if x is tn.variable), None)
            mi = next((k for k, x in enumerate(m_leaves) if x is mn.variable), None)
            assert ti == mi, f"{where}: AccumulateGrad of input {ti} in torch, {mi} in minigrad"
            assert mn.next_functions == (), f"{where}: AccumulateGrad.next_functions"
            return
        t_saved = {k for k in dir(tn) if k.startswith("_saved_")}
        m_saved = {k for k in dir(mn) if k.startswith("_saved_")}
        assert t_saved <= m_saved, f"{where}: {tname} lacks saved values {sorted(t_saved - m_saved)}"
        for k in sorted(m_saved - t_saved):  # a tensor PyTorch does not save would change the version checks
            assert not isinstance(getattr(mn, k), minigrad.Tensor), f"{where}: {tname} saves {k}, PyTorch does not"
        tnext, mnext = tn.next_functions, mn.next_functions
        assert len(tnext) == len(mnext), (
            f"{where}: {tname}.next_functions has {len(tnext)} edges in torch, {len(mnext)} in minigrad: "
            f"{[_nm(n) for n, _ in tnext]} vs {[_nm(n) for n, _ in mnext]}")
        for k, ((tc, tnr), (mc, mnr)) in enumerate(zip(tnext, mnext)):
            assert tnr == mnr, f"{where}.next[{k}]: input_nr torch {tnr} minigrad {mnr}"
            self.compare_graph(tc, mc, leaves, f"{where}.next[{k}]({_nm(tc)})", memo)

    # -- errors --------------------------------------------------------------------------------------------
    def error(self, fn, *specs, seed=None):
        """Both libraries raise the same exception type; minigrad's message contains PyTorch's."""
        rng = self.rng_for(seed)
        drawn = self.draw(specs, rng)
        t_in = self.build(self.torch, drawn)
        m_in = self.build(minigrad, drawn)
        with pytest.raises(Exception) as t_exc:
            fn(self.torch, *t_in)
        with pytest.raises(Exception) as m_exc:
            fn(minigrad, *m_in)
        te, me = t_exc.value, m_exc.value
        assert type(te).__name__ == type(me).__name__, (
            f"exception type: torch {type(te).__name__}({te}) minigrad {type(me).__name__}({me})")
        expected = norm_msg(str(te).split("\n(Triggered internally")[0])
        got = strip_hint(str(me))
        assert expected in got, f"message:\n torch:    {expected!r}\n minigrad: {got!r}"
        return te, me


def _nm(node) -> str:
    return "None" if node is None else type(node).__name__


_CURRENT = {"id": None}


def _current_test_id():
    return _CURRENT["id"]
