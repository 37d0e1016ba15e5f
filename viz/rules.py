"""One-line local derivative rules, for the side panel of the animated backward pass.

Each rule says what a node computes from the gradient it receives (``grad``: the gradient
of its output) and the values it saved, one ``grad_<input> = ...`` per input slot, in the
order of ``next_functions``. ``self``, ``other``, ``mat2``, ... are the op's inputs as
PyTorch names them (the names behind ``_saved_self``, ``_saved_other``); ``result`` is the
op's output. The formulas follow minigrad's derivative table (``minigrad/ops/derivatives.py``),
which mirrors PyTorch's ``derivatives.yaml``.
"""

from __future__ import annotations

import re

RULES: dict[str, str] = {
    # arithmetic
    "AddBackward0": "grad_self = grad, grad_other = grad * alpha",
    "AddBackward1": "grad_self = grad  (other is a number)",
    "SubBackward0": "grad_self = grad, grad_other = -grad * alpha",
    "SubBackward1": "grad_self = grad  (other is a number)",
    "RsubBackward0": "grad_self = -grad * alpha, grad_other = grad",
    "RsubBackward1": "grad_self = -grad * alpha",
    "MulBackward0": "grad_self = grad * other, grad_other = grad * self",
    "MulBackward1": "grad_self = grad * other  (other is a number)",
    "DivBackward0": "grad_self = grad / other, grad_other = -grad * self / other²",
    "DivBackward1": "grad_self = grad / other  (other is a number)",
    "NegBackward0": "grad_self = -grad",
    "ReciprocalBackward0": "grad_self = -grad * result²",
    "PowBackward0": "grad_self = grad * exponent * self^(exponent - 1)",
    "PowBackward1": "grad_self = grad * exponent * self^(exponent - 1), grad_exponent = grad * result * log(self)",
    "PowBackward2": "grad_exponent = grad * result * log(self)  (self is a number)",
    "SquareBackward0": "grad_self = grad * 2 * self",
    # elementwise functions
    "ExpBackward0": "grad_self = grad * result  (result = exp(self))",
    "Exp2Backward0": "grad_self = grad * result * ln 2",
    "LogBackward0": "grad_self = grad / self",
    "Log1PBackward0": "grad_self = grad / (self + 1)",
    "SinBackward0": "grad_self = grad * cos(self)",
    "CosBackward0": "grad_self = grad * -sin(self)",
    "TanBackward0": "grad_self = grad * (1 + result²)",
    "TanhBackward0": "grad_self = grad * (1 - result²)",
    "SigmoidBackward0": "grad_self = grad * result * (1 - result)",
    "ReluBackward0": "grad_self = grad * (result > 0)",
    "LeakyReluBackward0": "grad_self = grad * (1 if self > 0 else negative_slope)",
    "GeluBackward0": "grad_self = grad * gelu'(self)",
    "EluBackward0": "grad_self = grad * (1 if self > 0 else result + alpha)",
    "AbsBackward0": "grad_self = grad * sign(self)",
    "SqrtBackward0": "grad_self = grad / (2 * result)",
    "RsqrtBackward0": "grad_self = -0.5 * grad * result³",
    "ErfBackward0": "grad_self = grad * 2/√π * exp(-self²)",
    "SignBackward0": "grad_self = 0  (sign is flat almost everywhere)",
    "FloorBackward0": "grad_self = 0",
    "CeilBackward0": "grad_self = 0",
    "RoundBackward0": "grad_self = 0",
    "TruncBackward0": "grad_self = 0",
    "ClampBackward1": "grad_self = grad * (min <= self <= max)",
    "ClampBackward0": "grad_self = grad * (min <= self <= max), grad_min = grad * (self < min), "
                      "grad_max = grad * (self > max)",
    "ClampMinBackward0": "grad_self = grad * (self >= min)",
    "ClampMaxBackward0": "grad_self = grad * (self <= max)",
    "MaximumBackward0": "grad_self = grad * (self > other) (ties: half), grad_other = grad * (other > self)",
    "MinimumBackward0": "grad_self = grad * (self < other) (ties: half), grad_other = grad * (other < self)",
    "WhereBackward0": "grad_self = where(condition, grad, 0), grad_other = where(condition, 0, grad)",
    "MaskedFillBackward0": "grad_self = grad * ~mask",
    "MaskedFillBackward1": "grad_self = grad * ~mask, grad_value = sum(grad * mask)",
    # reductions
    "SumBackward0": "grad_self = grad expanded to self's shape (every element gets grad)",
    "SumBackward1": "grad_self = grad expanded back over the summed dims",
    "MeanBackward0": "grad_self = grad / numel, expanded to self's shape",
    "MeanBackward1": "grad_self = grad / (count over dim), expanded back over dim",
    "ProdBackward0": "grad_self = grad * result / self  (the product of the other elements)",
    "ProdBackward1": "grad_self = grad * (product of the other elements along dim)",
    "MaxBackward0": "grad_self = grad at the max element(s), 0 elsewhere (ties share it)",
    "MaxBackward1": "grad_self = grad scattered to the argmax along dim, 0 elsewhere",
    "MinBackward0": "grad_self = grad at the min element(s), 0 elsewhere (ties share it)",
    "MinBackward1": "grad_self = grad scattered to the argmin along dim, 0 elsewhere",
    "AmaxBackward0": "grad_self = grad split evenly among the max elements along dim",
    "AminBackward0": "grad_self = grad split evenly among the min elements along dim",
    "VarBackward0": "grad_self = grad * 2 * (self - mean) / (N - correction)",
    "StdBackward0": "grad_self = grad * (self - mean) / ((N - correction) * result)",
    "LinalgVectorNormBackward0": "grad_self = grad * self * |self|^(ord-2) / result^(ord-1)  (ord 2: self / result)",
    "NormBackward1": "grad_self = grad * self / result  (2-norm)",
    "LogsumexpBackward0": "grad_self = grad * exp(self - result)",
    "CumsumBackward0": "grad_self = reversed cumulative sum of grad along dim",
    # softmax and losses
    "SoftmaxBackward0": "grad_self = result * (grad - sum(grad * result, dim))",
    "LogSoftmaxBackward0": "grad_self = grad - exp(result) * sum(grad, dim)",
    "MseLossBackward0": "grad_self = grad * 2 * (self - target) / N, grad_target = -grad_self",
    "NllLossBackward0": "grad_self = -grad / N at each target class, 0 elsewhere",
    "NllLoss2DBackward0": "grad_self = -grad / N at each target class, 0 elsewhere",
    "BinaryCrossEntropyBackward0": "grad_self = grad * (self - target) / (self * (1 - self)) / N",
    "BinaryCrossEntropyWithLogitsBackward0": "grad_self = grad * (sigmoid(self) - target) / N",
    # linear algebra
    "MmBackward0": "grad_self = grad @ mat2ᵀ, grad_mat2 = selfᵀ @ grad",
    "MvBackward0": "grad_self = outer(grad, vec), grad_vec = selfᵀ @ grad",
    "DotBackward0": "grad_self = grad * tensor, grad_tensor = grad * self",
    "BmmBackward0": "grad_self = grad @ mat2ᵀ (per batch), grad_mat2 = selfᵀ @ grad (per batch)",
    "AddmmBackward0": "grad_self = grad * beta (summed to self's shape), grad_mat1 = grad @ mat2ᵀ * alpha, "
                      "grad_mat2 = mat1ᵀ @ grad * alpha",
    "AddmvBackward0": "grad_self = grad * beta, grad_mat = outer(grad, vec) * alpha, grad_vec = matᵀ @ grad * alpha",
    "AddBmmBackward0": "grad_self = grad * beta, grad_batch1 = grad @ batch2ᵀ, grad_batch2 = batch1ᵀ @ grad",
    # shape and views
    "ViewBackward0": "grad_self = grad.reshape(self's shape)",
    "UnsafeViewBackward0": "grad_self = grad.reshape(self's shape)",
    "ReshapeAliasBackward0": "grad_self = grad.reshape(self's shape)",
    "TBackward0": "grad_self = gradᵀ",
    "TransposeBackward0": "grad_self = grad.transpose(dim0, dim1)",
    "PermuteBackward0": "grad_self = grad.permute(inverse of dims)",
    "ExpandBackward0": "grad_self = grad summed over the expanded dims",
    "UnsqueezeBackward0": "grad_self = grad.squeeze(dim)",
    "SqueezeBackward0": "grad_self = grad.reshape(self's shape)",
    "SqueezeBackward1": "grad_self = grad.unsqueeze(dim)",
    "SqueezeBackward2": "grad_self = grad.unsqueeze(dims)",
    "SqueezeBackward4": "grad_self = grad.unsqueeze(dims)",
    "UnbindBackward0": "grad_self = stack(grads, dim)  (missing pieces count as 0)",
    "CloneBackward0": "grad_self = grad",
    "AliasBackward0": "grad_self = grad",
    "ToCopyBackward0": "grad_self = grad cast back to self's dtype",
    "CopyBackwards": "grad_self = 0 (overwritten), grad_src = grad",
    "CopySlices": "grad_base = grad with the written region zeroed, the region's grad goes to the source",
    "RepeatBackward0": "grad_self = grad summed over the repeated copies",
    "FlipBackward0": "grad_self = grad.flip(dims)",
    "RollBackward0": "grad_self = grad.roll(-shifts, dims)",
    # joining and splitting
    "CatBackward0": "grad_tensors[i] = the slice of grad that came from tensors[i]",
    "StackBackward0": "grad_tensors[i] = grad.select(dim, i)",
    "SplitBackward0": "grad_self = cat(grads, dim)  (missing pieces count as 0)",
    "SplitWithSizesBackward0": "grad_self = cat(grads, dim)  (missing pieces count as 0)",
    # indexing
    "SelectBackward0": "grad_self = zeros(self's shape) with grad written at [index] along dim",
    "SliceBackward0": "grad_self = zeros(self's shape) with grad written at [start:end:step] along dim",
    "IndexBackward0": "grad_self = zeros(self's shape) with grad added at the indexed places",
    "IndexPutBackward0": "grad_self = grad with the written places zeroed, grad_values = grad[indices]",
    "GatherBackward0": "grad_self = zeros(self's shape) with grad scatter-added at index along dim",
    "ScatterAddBackward0": "grad_self = grad, grad_src = grad.gather(dim, index)",
    "SelectBackwardBackward0": "grad_grad_output = grad.select(dim, index)",
    "SliceBackwardBackward0": "grad_grad_output = grad[start:end:step] along dim",
    "FillBackward0": "grad_self = 0  (every element was overwritten)",
    # nn
    "ConvolutionBackward0": "grad_input = conv_transpose(grad, weight), grad_weight = conv(input, grad), "
                            "grad_bias = sum(grad)",
    "NativeLayerNormBackward0": "grad_input, grad_weight, grad_bias from the normalised input and the saved mean/rstd",
    "NativeDropoutBackward0": "grad_self = grad * mask * scale",
    "EmbeddingBackward0": "grad_weight = grad scatter-added at the looked-up rows",
    # the sink of every leaf
    "AccumulateGrad": ".grad = grad  if .grad is None,  else  .grad = .grad + grad",
}

_PREFIX = re.compile(r"^.*::")
_SLOT_NAME = re.compile(r"\bgrad_([A-Za-z_][A-Za-z0-9_]*(?:\[i\])?)\s*=")


def short_name(name: str) -> str:
    """'torch::autograd::AccumulateGrad' -> 'AccumulateGrad'; other names are kept."""
    return _PREFIX.sub("", str(name))


def rule_for(name: str) -> str | None:
    """The one-line rule for a node name, or None when the table does not know it.

    A custom ``Function`` named ``Foo`` gives nodes called ``FooBackward``: they have no
    table entry (their rule is whatever ``Foo.backward`` computes).
    """
    key = short_name(name)
    if key in RULES:
        return RULES[key]
    base = re.sub(r"\d+$", "", key)
    for candidate, text in RULES.items():
        if re.sub(r"\d+$", "", candidate) == base:
            return text
    return None


def describe(name: str) -> str:
    """The rule with its node name: 'MulBackward0: grad_self = grad * other, ...'."""
    text = rule_for(name)
    if text is None:
        key = short_name(name)
        if key.endswith("Backward"):
            return f"{key}: the custom Function's backward() computes the input gradients"
        return f"{key}: no rule in viz's table; the node computes its own derivative"
    return f"{short_name(name)}: {text}"


def input_names(name: str, count: int) -> list[str]:
    """Names of a node's input slots from its rule ('self', 'other'), else 'input 0', ...

    Only used when the rule names exactly ``count`` inputs, so a table entry that does not
    fit this node (an unusual overload) never mislabels a gradient.
    """
    text = rule_for(name)
    names = _SLOT_NAME.findall(text) if text else []
    if len(names) == count and not any(n.endswith("[i]") for n in names):
        return names
    if len(names) == 1 and names[0].endswith("[i]"):
        stem = names[0][:-3]
        return [f"{stem}[{i}]" for i in range(count)]
    return [f"input {i}" for i in range(count)]
