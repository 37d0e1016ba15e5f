"""Issue 14's bullets, and a classifier that files a (shrunk) mismatch under the bullet it belongs to.

The classifier is a list of rules (category, a pattern on the mismatch's description, a pattern on
the snippet); the first rule that matches wins. It only suggests: ``known_failures.md`` stores the
bullet of every entry, and ``known --update`` keeps the stored bullet of an entry that did not change.
Mismatches no rule knows go under ``unclassified``, which the CI test rejects, so every entry of the
list is filed by someone who looked at it.
"""

from __future__ import annotations

import re

# key -> (section of issue 14, the bullet's words)
BULLETS: dict[str, tuple[str, str]] = {
    "second-order-graph": ("Not in issue 14 (issue 13: graphs of the backward pass)",
                           "the graph a `create_graph=True` backward builds: PyTorch's fused double-backward "
                           "nodes and the scalar forms (`MulBackward1`) of its C++ formulas"),
    "masked-inf": ("Silently wrong values and gradients",
                   "A masked `inf` gradient becomes NaN (relu, clamp, where, masked_fill, maximum/minimum, max(dim)); "
                   "at NaN inputs PyTorch passes the gradient where minigrad drops it (relu, abs)"),
    "max-nan": ("Silently wrong values and gradients",
                "`maximum`/`minimum` with a NaN operand: PyTorch sends the gradient to both operands"),
    "gather-index": ("Silently wrong values and gradients",
                     "`gather` with an index smaller than the input in other dims"),
    "norm-p<1": ("Silently wrong values and gradients", "`norm(p<1)` has a NaN gradient at zero entries"),
    "retain-grad-inplace": ("Silently wrong values and gradients",
                            "`retain_grad()` plus an in-place write reports the gradient of the old version"),
    "grad-hook": ("Silently wrong values and gradients", "`autograd.grad` applies an input's own tensor hook"),
    "int-div-zero": ("Silently wrong values and gradients",
                     "Integer division and remainder by zero give 0 "
                     "(PyTorch raises `RuntimeError: ZeroDivisionError`)"),
    "numpy-scalar": ("Silently wrong values and gradients",
                     "A NumPy float64 scalar promotes a float32 tensor to float64"),
    "signed-zero": ("Silently wrong values and gradients",
                    "Signed zero: `relu(-0.)` returns +0; `sign(nan)` is NaN where PyTorch gives 0"),
    "rg-propagation": ("Silently wrong values and gradients",
                       "`requires_grad` propagation: a view made before `base.requires_grad_()`; "
                       "`i[0] = <float tensor requiring grad>`"),
    "crash-0d-dim": ("Crashes with NumPy's exceptions",
                     "0-d tensors with `dim` in std/var/norm/logsumexp/prod (backward) and `t()`/transpose backward"),
    "crash-clamp-broadcast": ("Crashes with NumPy's exceptions",
                              "`clamp` with tensor bounds that broadcast the result larger (backward)"),
    "crash-std-one": ("Crashes with NumPy's exceptions",
                      "`std()`/`var()` of one element (PyTorch gives nan and its own warning)"),
    "crash-index-empty": ("Crashes with NumPy's exceptions", "`x[[]]`"),
    "crash-masked_fill-broadcast": ("Crashes with NumPy's exceptions",
                                    "a masked_fill mask that broadcasts the input larger"),
    "crash-mse-empty": ("Crashes with NumPy's exceptions", "MSELoss over an empty broadcast"),
    "crash-minimum-bool": ("Crashes with NumPy's exceptions", "`minimum(x, bool_tensor)` backward"),
    "crash-pow-int": ("Crashes with NumPy's exceptions", "`pow(3, int tensor with negatives)`"),
    "crash-empty-dim": ("Crashes with NumPy's exceptions", "empty-dim max/argmax/amax"),
    "crash-int-overflow": ("Crashes with NumPy's exceptions",
                           "int overflow (`int32 + 2**40`, `uint8 - 300` raise OverflowError where PyTorch wraps)"),
    "missing-backward-twice": ("Missing PyTorch errors",
                               "backward twice through an index, through `c[[1, 2]] = b[[1, 1]]`"),
    "missing-detach_": ("Missing PyTorch errors", "a saved tensor that was `detach_()`-ed"),
    "missing-view": ("Missing PyTorch errors", "`view(-1)` on a non-contiguous product"),
    "missing-split-inplace": ("Missing PyTorch errors",
                              "split/unbind outputs used after their base was written in place"),
    "missing-dtype-check": ("Missing PyTorch errors", "`F.relu`/`abs` on bool, `var` on int"),
    "missing-bce-range": ("Missing PyTorch errors", "BCE's input-range check"),
    "missing-inf-norm-empty": ("Missing PyTorch errors", "inf-norm over an empty dim"),
    "overlap-check": ("Missing PyTorch errors",
                      "the in-place overlap check (wrongly rejects size-1 expanded dims, misses partial overlap)"),
    "numpy-warnings": ("Texts and warnings",
                       "NumPy warnings never reach the user (std/var with <= 0 degrees of freedom: PyTorch's warning)"),
    "saved-tensor-names": ("Texts and warnings",
                           "the saved-tensor error names nodes fully (`PowBackward1`, `CopySlices` with its prefix)"),
    "create_graph-warning": ("Texts and warnings", "the create_graph warning only when PyTorch gives it"),
    "only_inputs": ("Texts and warnings", "`autograd.grad(..., only_inputs=...)` warns as PyTorch"),
    "is_grads_batched": ("Texts and warnings", "`is_grads_batched=True` either works or says it is not implemented"),
    "cross_entropy-int32": ("Texts and warnings", "`cross_entropy` rejects int32 targets with PyTorch's text"),
    "ragged": ("Texts and warnings", "a ragged list in `tensor(...)` gives PyTorch's text"),
    "tensor-warning": ("Texts and warnings", "`tensor(t)` warns with PyTorch 2.13's \"detach().clone()\" text"),
    "is_anomaly_enabled": ("Texts and warnings", "`is_anomaly_enabled` exists"),
    "node-slice": ("Node names", "a slice/narrow covering a whole dim keeps `SliceBackward0` (not Alias)"),
    "node-setitem": ("Node names", "full-range setitem gives `CopySlices`"),
    "node-0d-args": ("Node names", "masked_fill/clamp with 0-d tensor arguments are `...Backward1`"),
    "node-floor_divide": ("Node names", "floor_divide's node has PyTorch's slots"),
    # Found by the fuzzer, not listed in issue 14 (each is a mismatch outside the README's differences).
    "new-dtype-checks": ("Not in issue 14",
                         "dtype and argument-type checks PyTorch makes and minigrad does not (mixed dtypes in "
                         "allclose/isclose/mm/dot/cat/where/losses, bool or int inputs PyTorch rejects, Python or "
                         "NumPy scalars where PyTorch wants a tensor)"),
    "issue13-create_graph-grad": ("Not in issue 14 (issue 13)",
                                  "after `backward(create_graph=True)` a second backward replaces `x.grad` instead "
                                  "of accumulating into it (PyTorch: the same tensor, still requiring grad)"),
    "issue13-hook-order": ("Not in issue 14 (issue 13)", "hooks on sibling leaves fire in reverse order"),
    "new-error-texts": ("Not in issue 14", "error texts that differ from PyTorch's first line"),
    "new-error-types": ("Not in issue 14", "a different exception type for the same mistake"),
    "new-retain_grad-inputs-twice": ("Not in issue 14",
                                     "a tensor that retains its gradient and is one of `backward(inputs=...)` "
                                     "receives its gradient twice"),
    "new-retains_grad-inputs": ("Not in issue 14",
                                "`backward(inputs=[non-leaf])` makes PyTorch set `retains_grad` on that input"),
    "new-expanded-inplace": ("Not in issue 14",
                             "in-place ops on expanded views that PyTorch allows (its overlap check is "
                             "per-op) are rejected"),
    "new-T-warnings": ("Not in issue 14", "`.T`/`.mT` on 0-d and 1-d tensors: PyTorch's warnings and behaviour"),
    "new-view-after-inplace": ("Not in issue 14",
                               "views whose base was written in place (no_grad views, multi-output views): "
                               "PyTorch's errors on use"),
    "new-grad-flags": ("Not in issue 14", "`requires_grad`/`is_leaf` of results differ"),
    "new-values": ("Not in issue 14", "forward values differ"),
    "new-gradients": ("Not in issue 14", "gradients differ"),
    "new-node-names": ("Not in issue 14", "node names or graph structure differ"),
    "new-warnings": ("Not in issue 14", "warnings differ"),
    "new-missing-errors": ("Not in issue 14", "PyTorch raises, minigrad does not"),
    "new-crashes": ("Not in issue 14", "minigrad raises where PyTorch works"),
    "new-shapes": ("Not in issue 14", "shapes or dtypes of results differ"),
    "unclassified": ("Unclassified", "no rule knows this mismatch yet: file it under a bullet"),
}

# (bullet, categories or None for any, pattern on the description, pattern on the snippet)
_RULES: list[tuple[str, set[str] | None, str, str]] = [
    ("int-div-zero", {"missing error"}, r"ZeroDivisionError", r""),
    ("numpy-warnings", {"warning"}, r"degrees of freedom|RuntimeWarning", r""),
    ("crash-std-one", {"crash"}, r"ZeroDivisionError|division by zero", r"\.(std|var)\("),
    ("tensor-warning", {"warning"}, r"To copy construct from a tensor", r""),
    ("new-T-warnings", {"warning", "crash", "error text"},
     r"\.T\b|x\.T|Tensor\.T|Tensor\.mT|tensor\.mT|mT is only", r""),
    ("cross_entropy-int32", None, r"expected target dtype to be Long", r""),
    ("missing-split-inplace", None, r"Output \d+ of (Split|Unbind|SplitWithSizes)\w* is a view", r""),
    ("new-view-after-inplace", None, r"view.{0,60}its base or another view of its base has been modified", r""),
    ("missing-detach_", None, r"detached in-place", r""),
    ("missing-backward-twice", {"missing error"}, r"backward through the graph a second time",
     r"\[.*(>|<|==|\]).*\]|\[\[|torch\.tensor\(\[[-\d, ]*\], dtype=torch\.int64\)\]|\] = "),
    ("overlap-check", {"missing error"}, r"some elements of the input tensor and the written-to tensor", r""),
    ("new-expanded-inplace", {"crash"}, r"more than one element of the written-to tensor", r"expand"),
    ("overlap-check", {"error text", "error type"},
     r"more than one element of the written-to tensor|some elements of the input tensor and the written-to",
     r""),
    ("overlap-check", {"crash"}, r"more than one element of the written-to tensor", r""),
    ("crash-0d-dim", {"crash", "error type"}, r"AxisError|axis -?\d+ is out of bounds for array of dimension 0", r""),
    ("crash-empty-dim", {"error type", "crash", "missing error"},
     r"(max|min|amax|amin|argmax|argmin)\(\): Expected reduction dim|empty sequence|zero-size array", r""),
    ("missing-inf-norm-empty", None, r"cannot compute the (inf|-inf|0|.*) norm", r""),
    ("crash-int-overflow", None, r"OverflowError|out of bounds for (u?int\d+)|without overflow", r""),
    ("crash-pow-int", {"crash"}, r"Integers to negative integer powers", r""),
    ("crash-minimum-bool", {"crash"}, r"numpy boolean (negative|subtract)", r"minimum|maximum|where|clamp"),
    ("crash-mse-empty", {"crash"}, r"division by zero|ZeroDivision", r"mse_loss|l1_loss"),
    ("crash-index-empty", {"crash"}, r"tensors used as indices must be of integer", r"\[\[\]\]|\(\[\], dtype"),
    ("crash-clamp-broadcast", {"crash"}, r"non-broadcastable output operand", r"clamp"),
    ("crash-masked_fill-broadcast", {"crash"}, r"must match the size|non-broadcastable|could not be broadcast",
     r"masked_fill"),
    ("missing-dtype-check", {"missing error", "error type"},
     r"Boolean inputs not supported for relu|\"abs_cpu\" not implemented for 'Bool'|std and var only support", r""),
    ("missing-bce-range", {"missing error"}, r"all elements of (input|target) should be between 0 and 1", r""),
    ("missing-view", {"missing error"}, r"view size is not compatible", r""),
    ("saved-tensor-names", {"error text"}, r"output \d+ of (Pow|CopySlices|minigrad::autograd::CopySlices)\b", r""),
    ("create_graph-warning", {"warning"}, r"create_graph=True will create a reference cycle", r""),
    ("only_inputs", {"warning"}, r"only_inputs argument is deprecated", r""),
    ("is_grads_batched", None, r".", r"is_grads_batched"),
    ("ragged", None, r"expected sequence of length", r""),
    ("is_anomaly_enabled", None, r"is_anomaly_enabled", r""),
    ("node-slice", {"node name"}, r"torch SliceBackward0, minigrad AliasBackward0", r""),
    ("node-setitem", {"node name"}, r"torch minigrad::autograd::CopySlices, minigrad minigrad::autograd::CopyBackwards",
     r""),
    ("node-0d-args", {"node name"}, r"torch (MaskedFill|Clamp)\w*Backward1", r""),
    ("node-floor_divide", {"graph structure"}, r"NotImplemented", r"//|floor_divide"),
    ("new-retain_grad-inputs-twice", {"gradient"}, r"\.grad:", r"retain_grad\(\)(.|\n)*inputs="),
    ("retain-grad-inplace", {"gradient"}, r"\.grad:", r"retain_grad\(\)(.|\n)*(\w_\(|\] = |[-+*/]= )"),
    ("grad-hook", {"gradient"}, r".", r"register_hook.*\n(.*\n)*.*autograd\.grad"),
    ("gather-index", {"shape"}, r".", r"gather"),
    ("gather-index", {"crash"}, r"indexing arrays could not be broadcast", r"gather"),
    ("numpy-scalar", {"shape", "crash", "value"}, r"float64|Double", r"np\.(float64|sqrt|float32)"),
    ("issue13-create_graph-grad", {"flags", "gradient"}, r"\.grad: requires_grad torch True minigrad False",
     r"create_graph=True"),
    ("rg-propagation", {"flags"}, r"requires_grad", r"requires_grad_\(\)|\] = |copy_\(|\.\w+_\("),
    ("new-retains_grad-inputs", {"flags"}, r"retains_grad torch True minigrad False", r"inputs="),
    ("masked-inf", {"gradient"}, r"signs of zeros", r"relu|clamp|where|masked_fill|maximum|minimum|max\(|min\("),
    ("signed-zero", {"value", "gradient"}, r"signs of zeros", r""),
    ("signed-zero", {"value", "gradient"}, r"inf positions|NaN positions", r"relu|sign|l1_loss"),
    ("max-nan", {"gradient"}, r".", r"(maximum|minimum|\.max\(|\.min\()(.|\n)*nan|nan(.|\n)*(maximum|minimum|\.max\(|"
     r"\.min\()"),
    ("norm-p<1", {"gradient"}, r"NaN", r"norm\(.*p=(0\.5|0)\b|norm\((0\.5|0)\)"),
    ("masked-inf", {"gradient"}, r".", r"relu|clamp|where|masked_fill|maximum|minimum|max\(|abs"),
    ("new-dtype-checks", {"missing error"},
     r"did not match|not implemented for '(Bool|Long|Int|Byte)'|does not support bool|must have the same dtype|"
     r"Found dtype|expected scalar type|Subtraction, the `-` operator, with a bool|must be Tensor, not|"
     r"expected both vectors|can't assign a numpy", r""),
    ("new-error-texts", {"error text"}, r".", r""),
    ("new-error-types", {"error type"}, r".", r""),
    ("new-missing-errors", {"missing error"}, r".", r""),
    ("new-crashes", {"crash"}, r".", r""),
    ("new-warnings", {"warning"}, r".", r""),
    ("new-grad-flags", {"flags"}, r".", r""),
    ("second-order-graph", {"second-order node name", "second-order graph"}, r".", r""),
    ("new-node-names", {"node name", "graph structure"}, r".", r""),
    ("new-values", {"value"}, r".", r""),
    ("new-gradients", {"gradient", "None-vs-zeros"}, r".", r""),
    ("new-shapes", {"shape"}, r".", r""),
]


def classify(category: str, detail: str, snippet: str) -> str:
    """The key of the bullet a mismatch belongs to (``unclassified`` when no rule matches)."""
    for key, cats, detail_re, snippet_re in _RULES:
        if cats is not None and category not in cats:
            continue
        if detail_re and not re.search(detail_re, detail):
            continue
        if snippet_re and not re.search(snippet_re, snippet):
            continue
        return key
    return "unclassified"


def title(key: str) -> str:
    section, words = BULLETS[key]
    return f"{section}: {words}"
