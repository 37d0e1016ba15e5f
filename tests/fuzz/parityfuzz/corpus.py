"""Fixed cases: every example of issue 14's "What must come out", as a fuzz program run every time.

Each case names the issue-14 bullet it comes from (a key of ``bullets.BULLETS``). The CI test runs
them with the random programs; their mismatches on today's main are entries of the known-failures
list like any other, so a fix shows up as a case that now agrees.
"""

from __future__ import annotations

from .program import Program, program_from_text

# name -> (bullet key, program text)
CASES: dict[str, tuple[str, str]] = {
    # -- silently wrong values and gradients ----------------------------------------------------------
    "relu-sqrt-masked-inf": ("masked-inf", """
x = torch.tensor([-1., 0., 2.], requires_grad=True)
torch.relu(x).sqrt().sum().backward()
"""),
    "clamp-sqrt-masked-inf": ("masked-inf", """
x = torch.tensor([-1., 0., 2.], requires_grad=True)
x.clamp(min=0).sqrt().sum().backward()
"""),
    "where-masked-inf": ("masked-inf", """
x = torch.tensor([-1., 0., 2.], requires_grad=True)
torch.where(x > 0, x, torch.zeros(3)).sqrt().sum().backward()
"""),
    "masked_fill-masked-inf": ("masked-inf", """
x = torch.tensor([-1., 0., 2.], requires_grad=True)
x.masked_fill(x <= 0, 0.).sqrt().sum().backward()
"""),
    "maximum-masked-inf": ("masked-inf", """
x = torch.tensor([-1., 0., 2.], requires_grad=True)
torch.maximum(x, torch.zeros(3)).sqrt().sum().backward()
"""),
    "max-dim-masked-inf": ("masked-inf", """
x = torch.tensor([[0., -1.], [4., 1.]], requires_grad=True)
x.max(dim=1).values.sqrt().sum().backward()
"""),
    "relu-log-nan-input": ("masked-inf", """
x = torch.tensor([-1., 2.], requires_grad=True)
torch.relu(x.log()).sum().backward()
"""),
    "relu-at-nan": ("masked-inf", """
x = torch.tensor([nan, 1.], requires_grad=True)
torch.relu(x).sum().backward()
"""),
    "abs-at-nan": ("masked-inf", """
x = torch.tensor([nan, 1.], requires_grad=True)
x.abs().sum().backward()
"""),
    "maximum-nan-operand": ("max-nan", """
a = torch.tensor([nan, 1.], requires_grad=True)
b = torch.tensor([0., nan], requires_grad=True)
torch.maximum(a, b).sum().backward()
"""),
    "minimum-nan-operand": ("max-nan", """
a = torch.tensor([nan, 1.], requires_grad=True)
b = torch.tensor([0., nan], requires_grad=True)
torch.minimum(a, b).sum().backward()
"""),
    "gather-smaller-index": ("gather-index", """
x = torch.tensor([[0., 1.], [1., -2.]], requires_grad=True)
y = torch.gather(x, 1, torch.tensor([[1, 1, 0]]))
"""),
    "norm-p-half-at-zero": ("norm-p<1", """
x = torch.tensor([0., 1., -2.], requires_grad=True)
x.norm(p=0.5).backward()
"""),
    "retain_grad-inplace": ("retain-grad-inplace", """
x = torch.tensor([1., 2.], requires_grad=True)
v = x * 1
v.retain_grad()
v[None].mul_(3)
v.sum().backward()
"""),
    "autograd.grad-input-hook": ("grad-hook", """
x = torch.tensor([1., 2.], requires_grad=True)
v = x * 1
h = v.register_hook(lambda g: g * 2)
g = torch.autograd.grad((v * 3).sum(), [x, v])
"""),
    "int-floordiv-zero": ("int-div-zero", """
y = torch.tensor([1, -1]) // 0
"""),
    "int-remainder-zero": ("int-div-zero", """
y = torch.tensor([1, -1]) % 0
"""),
    "int-div-floor-zero": ("int-div-zero", """
y = torch.div(torch.tensor([1, -1]), 0, rounding_mode='floor')
"""),
    "numpy-scalar-promotion": ("numpy-scalar", """
x = torch.tensor([[1., 2.]])
y = x * np.sqrt(2.)
"""),
    "numpy-scalar-linear": ("numpy-scalar", """
x = torch.tensor([[1., 2.]])
lin = torch.nn.Linear(2, 1)
w = lin.weight.data.fill_(0.5)
y = lin(x * np.sqrt(2.)).detach() * 0
"""),
    "relu-negative-zero": ("signed-zero", """
x = torch.tensor([-0.], requires_grad=True)
y = 1 / torch.relu(x)
"""),
    "sign-nan": ("signed-zero", """
y = torch.sign(torch.tensor([nan, 1.]))
"""),
    "l1_loss-nan-grad": ("signed-zero", """
x = torch.tensor([nan, 1.], requires_grad=True)
torch.nn.functional.l1_loss(x, torch.zeros(2)).backward()
"""),
    "view-before-requires_grad_": ("rg-propagation", """
base = torch.tensor([1., 2.])
v = base[:1]
r = base.requires_grad_()
"""),
    "int-setitem-float-requiring-grad": ("rg-propagation", """
i = torch.tensor([1, 2])
f = torch.tensor(5., requires_grad=True)
i[0] = f
"""),
    # -- crashes with NumPy's exceptions ----------------------------------------------------------------
    "0-d-std-dim-backward": ("crash-0d-dim", """
x = torch.tensor(2., requires_grad=True)
x.std(dim=0).backward()
"""),
    "0-d-var-dim-backward": ("crash-0d-dim", """
x = torch.tensor(2., requires_grad=True)
x.var(dim=0).backward()
"""),
    "0-d-norm-dim-backward": ("crash-0d-dim", """
x = torch.tensor(2., requires_grad=True)
x.norm(dim=0).backward()
"""),
    "0-d-logsumexp-dim-backward": ("crash-0d-dim", """
x = torch.tensor(2., requires_grad=True)
x.logsumexp(dim=0).backward()
"""),
    "0-d-prod-dim-backward": ("crash-0d-dim", """
x = torch.tensor(0., requires_grad=True)
x.prod(dim=0).backward()
"""),
    "0-d-t-backward": ("crash-0d-dim", """
x = torch.tensor(2., requires_grad=True)
x.t().backward()
"""),
    "0-d-transpose-backward": ("crash-0d-dim", """
x = torch.tensor(2., requires_grad=True)
x.transpose(0, -1).backward()
"""),
    "0-d-std-dim-keepdim": ("crash-0d-dim", """
x = torch.tensor(2., requires_grad=True)
y = x.std(dim=0, keepdim=True)
"""),
    "clamp-tensor-bounds-broadcast": ("crash-clamp-broadcast", """
x = torch.tensor([1., -1.], requires_grad=True)
lo = torch.tensor([[0.], [2.]], requires_grad=True)
x.clamp(min=lo).sum().backward()
"""),
    "std-one-element": ("crash-std-one", """
x = torch.tensor([2.], requires_grad=True)
y = x.std()
y.backward()
"""),
    "var-one-element": ("crash-std-one", """
x = torch.tensor([2.], requires_grad=True)
y = x.var()
y.backward()
"""),
    "index-empty-list": ("crash-index-empty", """
x = torch.tensor([1., 2.], requires_grad=True)
y = x[[]]
"""),
    "masked_fill-mask-broadcasts-input": ("crash-masked_fill-broadcast", """
x = torch.tensor([1., 2.], requires_grad=True)
y = x.masked_fill(torch.tensor([[True, False], [False, True]]), 0.)
y.sum().backward()
"""),
    "mse_loss-empty-broadcast": ("crash-mse-empty", """
x = torch.zeros(0, 2, requires_grad=True)
y = torch.nn.MSELoss()(x, torch.zeros(2))
y.backward()
"""),
    "minimum-bool-backward": ("crash-minimum-bool", """
x = torch.tensor([0.5, -1.], requires_grad=True)
torch.minimum(x, torch.tensor([True, False])).sum().backward()
"""),
    "rpow-int-negative": ("crash-pow-int", """
y = torch.pow(3, torch.tensor([2, -1]))
"""),
    "max-empty-dim": ("crash-empty-dim", """
y = torch.zeros(0, 3).max(dim=0)
"""),
    "argmax-empty-dim": ("crash-empty-dim", """
y = torch.zeros(0, 3).argmax(dim=0)
"""),
    "amax-empty-dim": ("crash-empty-dim", """
y = torch.zeros(0, 3).amax(dim=0)
"""),
    "int32-overflow": ("crash-int-overflow", """
y = torch.tensor([1], dtype=torch.int32) + 2**40
"""),
    "uint8-overflow": ("crash-int-overflow", """
y = torch.tensor([1], dtype=torch.uint8) - 300
"""),
    # -- missing PyTorch errors ---------------------------------------------------------------------------
    "index-backward-twice": ("missing-backward-twice", """
x = torch.tensor([0.2, 0.7, 0.9], requires_grad=True)
l = x[x > .5].sum()
l.backward()
l.backward()
"""),
    "index-put-backward-twice": ("missing-backward-twice", """
b = torch.tensor([1., 2., 3.], requires_grad=True)
c = torch.zeros(3)
c[[1, 2]] = b[[1, 1]]
l = c.sum()
l.backward()
l.backward()
"""),
    "detach_-saved-tensor": ("missing-detach_", """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
z = y * y
y.detach_()
z.sum().backward()
"""),
    "view-noncontiguous-product": ("missing-view", """
a = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
b = torch.tensor([[1., 2.], [3., 4.]])
y = (a.t() * b).view(-1)
"""),
    "split-after-base-inplace": ("missing-split-inplace", """
x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
b = x * 1
p = b.split(2)
b.mul_(2)
p[0].sum().backward()
"""),
    "unbind-after-base-inplace": ("missing-split-inplace", """
x = torch.tensor([1., 2.], requires_grad=True)
b = x * 1
p = b.unbind(0)
b.add_(1)
p[0].backward()
"""),
    "relu-bool": ("missing-dtype-check", """
y = torch.nn.functional.relu(torch.tensor([True, False]))
"""),
    "abs-bool": ("missing-dtype-check", """
y = torch.tensor([True, False]).abs()
"""),
    "var-int": ("missing-dtype-check", """
y = torch.tensor([1, 2, 4]).var()
"""),
    "bce-input-range": ("missing-bce-range", """
y = torch.nn.functional.binary_cross_entropy(torch.tensor([nan]), torch.tensor([1.]))
"""),
    "inf-norm-empty-dim": ("missing-inf-norm-empty", """
y = torch.zeros(0, 3).norm(p=inf, dim=0)
"""),
    "overlap-expanded-size-1": ("overlap-check", """
y = torch.zeros(3).expand(1, 3).clamp_(min=1.)
"""),
    "overlap-partial": ("overlap-check", """
v = torch.zeros(2, 2)
v.add_(v[..., -1, -1])
"""),
    # -- texts and warnings -------------------------------------------------------------------------------
    "std-dof-warning": ("numpy-warnings", """
y = torch.tensor([1.]).std()
"""),
    "var-dof-warning": ("numpy-warnings", """
y = torch.tensor([1., 2.]).var(dim=0, correction=3)
"""),
    "saved-tensor-error-PowBackward1": ("saved-tensor-names", """
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([2., 3.], requires_grad=True)
y = a ** b
y.add_(1)
y.sum().backward()
"""),
    "saved-tensor-error-CopySlices": ("saved-tensor-names", """
a = torch.tensor([1., 2.], requires_grad=True)
c = a * 1
d = c * c
c[0] = 5.
d.sum().backward()
"""),
    "create_graph-warning-inputs": ("create_graph-warning", """
a = torch.tensor([1.], requires_grad=True)
b = a * 2
(b * b).sum().backward(create_graph=True, inputs=[b])
"""),
    "only_inputs-warning": ("only_inputs", """
x = torch.tensor([1., 2.], requires_grad=True)
g = torch.autograd.grad((x * x).sum(), x, only_inputs=False)
"""),
    "is_grads_batched": ("is_grads_batched", """
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
g = torch.autograd.grad(y, x, torch.eye(2), is_grads_batched=True)
"""),
    "cross_entropy-int32-target": ("cross_entropy-int32", """
y = torch.nn.functional.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 1], dtype=torch.int32))
"""),
    "ragged-tensor": ("ragged", """
y = torch.tensor([[1., 2.], [3.]])
"""),
    "tensor-of-tensor-warning": ("tensor-warning", """
y = torch.tensor(torch.tensor([1., 2.]))
"""),
    "is_anomaly_enabled": ("is_anomaly_enabled", """
y = torch.is_anomaly_enabled()
"""),
    # -- node names ---------------------------------------------------------------------------------------
    "slice-whole-dim": ("node-slice", """
x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
y = x[0:2]
"""),
    "narrow-whole-dim": ("node-slice", """
x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
y = x.narrow(1, 0, 2)
"""),
    "setitem-full-range": ("node-setitem", """
x = torch.tensor([1., 2.], requires_grad=True)
c = torch.zeros(2)
c[-2:] = x
"""),
    "masked_fill-0-d-value": ("node-0d-args", """
x = torch.tensor([1., -2.], requires_grad=True)
y = x.masked_fill(x < 0, torch.tensor(0.))
"""),
    "clamp-0-d-bounds": ("node-0d-args", """
x = torch.tensor([1., -2.], requires_grad=True)
y = x.clamp(torch.tensor(0.), 1.5)
"""),
    "floor_divide-slots": ("node-floor_divide", """
x = torch.tensor([3., 4.], requires_grad=True)
y = x // torch.tensor(2.)
"""),
}


def programs() -> list[Program]:
    return [program_from_text(f"corpus {name}", text) for name, (_, text) in CASES.items()]


def bullet_of(program_name: str) -> str | None:
    if program_name.startswith("corpus "):
        return CASES[program_name.removeprefix("corpus ")][0]
    return None
