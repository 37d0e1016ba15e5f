"""Autograd features a program uses between ops, and the backward phase that ends it.

Middle features: in-place ops on non-leaves and through views, in-place ops on leaves under
``no_grad``, tensor hooks (that record what they see, or scale the gradient), removing a hook,
``retain_grad``, ``detach``/``detach_``, ``requires_grad_``, ``.data`` writes, ops under ``no_grad``.
End phase: ``backward`` (with ``gradient=``, ``retain_graph``, ``inputs=``, ``create_graph``),
``autograd.grad`` (leaves and intermediates as inputs, unused inputs, ``allow_unused``,
``create_graph`` and a second-order gradient), backward twice with and without ``retain_graph``.
"""

from __future__ import annotations

from . import catalogue
from .generator import Builder, Var


def middle(b: Builder) -> None:
    rng = b.rng
    choice = rng.choices(
        ["inplace", "view-inplace", "no_grad-leaf", "hook", "retain_grad", "detach", "detach_", "requires_grad_",
         "data", "no_grad-op"],
        [30, 14, 10, 14, 10, 6, 3, 5, 3, 5],
    )[0]
    if choice == "inplace":
        catalogue.step(b, "inplace")
    elif choice == "view-inplace":
        _view_then_inplace(b)
    elif choice == "no_grad-leaf":
        leaf = b.pick(lambda v: v.leaf and v.rg)
        if leaf is not None:
            b.tags.add("feat:no_grad in-place on a leaf")
            catalogue.step(b, "inplace", leaf, prefix="with torch.no_grad(): ")
    elif choice == "hook":
        _hook(b)
    elif choice == "retain_grad":
        v = b.pick(lambda u: u.rg and not u.leaf) or b.pick()
        if v is not None:
            b.emit(f"{v.name}.retain_grad()", kind="feature", tags=("feat:retain_grad",))
    elif choice == "detach":
        v = b.pick(lambda u: u.rg) or b.pick()
        if v is not None:
            name = b.fresh("d")
            b.emit(f"{name} = {v.name}.detach()", target=name, tags=("feat:detach",))
            b.pool.append(Var(name, v.shape, v.dtype, leaf=True, base=v.base or v.name))
    elif choice == "detach_":
        v = b.pick(lambda u: not u.leaf)
        if v is not None:
            b.emit(f"{v.name}.detach_()", kind="feature", tags=("feat:detach_",))
            if v.base is None:
                v.rg, v.leaf = False, True
    elif choice == "requires_grad_":
        v = b.pick(lambda u: u.leaf and not u.rg and u.is_float) or b.pick(lambda u: u.leaf)
        if v is not None:
            b.emit(f"{v.name}.requires_grad_()", kind="feature", tags=("feat:requires_grad_",))
            if v.is_float and v.base is None:
                v.rg = True
    elif choice == "data":
        v = b.pick(lambda u: u.rg and u.is_float)
        if v is not None:
            b.emit(f"{v.name}.data.mul_({rng.choice(['2.0', '0.0', '-1.0'])})", kind="inplace", tags=("feat:.data",))
    elif choice == "no_grad-op":
        before = len(b.pool)
        catalogue.step(b, "plain")
        stmt = b.stmts[-1]
        if stmt.target and len(b.pool) > before:
            b.stmts[-1] = type(stmt)(code=f"with torch.no_grad(): {stmt.code}", target=stmt.target, kind=stmt.kind,
                                     tags=(*stmt.tags, "feat:op under no_grad"), array=stmt.array)
            for v in b.pool[before:]:
                v.rg = False


_VIEWS = ["[0]", "[:1]", ".view(-1)", ".unsqueeze(0)", ".transpose(0, -1)", ".narrow(0, 0, 1)", "[None]",
          ".expand(2, *{shape})", ".split(1)[0]", ".unbind(0)[0]", "[[0]]", ".t()"]


def _view_then_inplace(b: Builder) -> None:
    rng = b.rng
    v = b.pick(lambda u: not u.leaf and u.ndim >= 1 and u.shape[0] >= 1) or b.pick(lambda u: u.ndim >= 1)
    if v is None:
        return
    suffix = rng.choice(_VIEWS if v.ndim <= 2 else _VIEWS[:-1])
    suffix = suffix.replace("{shape}", repr(tuple(v.shape)))
    shape = _view_shape(v, suffix)
    name = b.fresh("w")
    b.emit(f"{name} = {v.name}{suffix}", target=name, tags=("feat:view",))
    w = Var(name, shape, v.dtype, rg=v.rg, base=v.base or v.name)
    b.pool.append(w)
    catalogue.step(b, "inplace", w)


def _view_shape(v: Var, suffix: str) -> tuple[int, ...]:
    s = v.shape
    if suffix == "[0]" or suffix in (".split(1)[0]",):
        return s[1:] if suffix == "[0]" else (1,) + s[1:]
    if suffix == ".unbind(0)[0]":
        return s[1:]
    if suffix == "[:1]" or suffix == ".narrow(0, 0, 1)" or suffix == "[[0]]":
        return (1,) + s[1:]
    if suffix == ".t()" or suffix == ".transpose(0, -1)":
        return s[::-1] if len(s) <= 2 else (s[-1],) + s[1:-1] + (s[0],)
    if suffix == ".view(-1)":
        return (v.numel,)
    if suffix in (".unsqueeze(0)", "[None]"):
        return (1,) + s
    if suffix.startswith(".expand"):
        return (2,) + s
    return s


def _hook(b: Builder) -> None:
    rng = b.rng
    v = b.pick(lambda u: u.rg) or b.pick()
    if v is None:
        return
    if rng.random() < 0.6:
        fn = f"logger('{v.name}')"
    else:
        fn = f"scaler({rng.choice(['2.0', '0.0', '-1.0'])})"
    name = b.fresh("h")
    b.emit(f"{name} = {v.name}.register_hook({fn})", target=name, kind="feature", tags=("feat:hook",))
    if rng.random() < 0.15:
        b.emit(f"{name}.remove()", kind="feature", tags=("feat:hook remove",))


# --------------------------------------------------------------------------------------------------
# The end phase


def _loss(b: Builder) -> Var | None:
    """A scalar to differentiate: a variable that requires grad (recent ones first), summed."""
    v = b.pick(lambda u: u.rg, float_bias=1.0, unknown=True)
    if v is None:
        v = b.pick(unknown=True)
    if v is None:
        return None
    if v.shape == () and b.rng.random() < 0.7:
        return v
    name = b.fresh("l")
    how = b.rng.choice(["sum()", "sum()", "mean()", "sum() * 2"])
    b.emit(f"{name} = {v.name}.{how}", target=name, tags=("op:sum",) if how.startswith("sum") else ("op:mean",))
    return Var(name, (), v.dtype, rg=v.rg, taint=v.taint)


def _grad_inputs(b: Builder) -> list[Var]:
    rng = b.rng
    leaves = [v for v in b.pool if v.rg and v.leaf and v.known]
    inner = [v for v in b.pool if v.rg and not v.leaf and v.known and "[" not in v.name]
    chosen: list[Var] = []
    for group, tag in ((leaves, "feat:grad of a leaf"), (inner, "feat:grad of an intermediate")):
        if group and rng.random() < 0.7:
            for v in rng.sample(group, min(len(group), rng.randint(1, 2))):
                chosen.append(v)
                b.tags.add(tag)
    if rng.random() < 0.2:
        unused = b.new_input(dtype="float64", rg=True, leaf_list=False)
        chosen.append(unused)
        b.tags.add("feat:unused input")
    if not chosen:
        chosen = leaves[:1] or inner[:1]
    return chosen


def end(b: Builder) -> None:
    rng = b.rng
    mode = rng.choices(["backward", "grad", "backward-gradient", "create_graph-backward", "nothing"],
                       [38, 34, 10, 13, 5])[0]
    if mode == "nothing":
        return
    if mode == "backward-gradient":
        v = b.pick(lambda u: u.rg, unknown=False, float_bias=1.0)
        if v is None:
            return
        g = b.constant(v.shape, v.dtype if v.is_float else "float32")
        b.emit(f"{v.name}.backward({g})", kind="backward", tags=("feat:backward", "feat:backward gradient="))
        return
    loss = _loss(b)
    if loss is None:
        return
    if mode == "backward":
        _backward(b, loss)
    elif mode == "grad":
        _autograd_grad(b, loss)
    else:
        b.emit(f"{loss.name}.backward(create_graph=True)", kind="backward",
               tags=("feat:backward", "feat:create_graph"), taint=True)
        leaf = b.pick(lambda u: u.leaf and u.rg)
        if leaf is not None and rng.random() < 0.8:
            if rng.random() < 0.5:
                b.emit(f"{leaf.name}.grad.sum().backward()", kind="backward", tags=("feat:second order",), taint=True)
            else:
                name = b.fresh("gg")
                b.emit(f"{name} = torch.autograd.grad({leaf.name}.grad.sum(), [{leaf.name}], allow_unused=True)",
                       target=name, kind="grad", tags=("feat:second order", "feat:autograd.grad"), taint=True)


def _backward(b: Builder, loss: Var) -> None:
    rng = b.rng
    kw = []
    retain = rng.random() < 0.4
    if retain:
        kw.append("retain_graph=True")
    if rng.random() < 0.15:
        ins = _grad_inputs(b)
        if ins:
            kw.append(f"inputs=[{', '.join(v.name for v in ins)}]")
            b.tags.add("feat:backward inputs=")
    b.emit(f"{loss.name}.backward({', '.join(kw)})", kind="backward", tags=("feat:backward",))
    if rng.random() < 0.45:
        leaf = b.pick(lambda u: u.leaf and u.rg)
        if leaf is not None and rng.random() < 0.3:
            b.emit(rng.choice([f"{leaf.name}.grad = None", f"{leaf.name}.grad.zero_()"]), kind="feature",
                   tags=("feat:reset .grad",))
        tag = "feat:backward twice (retain_graph)" if retain else "feat:backward twice (no retain_graph)"
        b.emit(f"{loss.name}.backward()", kind="backward", tags=("feat:backward", tag))


def _autograd_grad(b: Builder, loss: Var) -> None:
    rng = b.rng
    ins = _grad_inputs(b)
    if not ins:
        return
    kw = []
    unused = rng.random()
    if unused < 0.45:
        kw.append("allow_unused=True")
        b.tags.add("feat:allow_unused")
    elif unused < 0.55:
        kw.append("allow_unused=False")
    create = rng.random() < 0.35
    if create:
        kw.append("create_graph=True")
        b.tags.add("feat:create_graph")
    elif rng.random() < 0.3:
        kw.append("retain_graph=True")
    if rng.random() < 0.05:
        kw.append("materialize_grads=True")
        b.tags.add("feat:materialize_grads")
    name = b.fresh("g")
    inputs = ", ".join(v.name for v in ins)
    seq = f"[{inputs}]" if len(ins) > 1 or rng.random() < 0.7 else inputs
    b.emit(f"{name} = torch.autograd.grad({loss.name}, {seq}{''.join(', ' + k for k in kw)})", target=name,
           kind="grad", tags=("feat:autograd.grad",), taint=create)
    if create and rng.random() < 0.85:
        b.tags.add("feat:second order")
        target = rng.choice(ins)
        if rng.random() < 0.6:
            name2 = b.fresh("gg")
            b.emit(f"{name2} = torch.autograd.grad({name}[0].sum(), [{target.name}], allow_unused=True)",
                   target=name2, kind="grad", tags=("feat:second order",), taint=True)
        else:
            b.emit(f"{name}[0].sum().backward()", kind="backward", tags=("feat:second order", "feat:backward"),
                   taint=True)
    elif rng.random() < 0.3:
        tag = "feat:backward twice (retain_graph)" if "retain_graph=True" in kw or create else \
            "feat:backward twice (no retain_graph)"
        b.emit(f"{loss.name}.backward()", kind="backward", tags=("feat:backward", tag))
