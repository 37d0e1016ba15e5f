"""What the fuzzer does not count as a mismatch: exactly "Differences from PyTorch" (docs/differences.md).

Each entry quotes the bullet of docs/differences.md it comes from (a test checks that every quote is still in the
page and that every bullet of that section has an entry, so the two lists cannot drift apart) and
says how the fuzzer honours it: by normalising what it compares, by not comparing something, or by
not drawing something. Nothing else is excluded; everything else that differs is a mismatch.
"""

from __future__ import annotations

import dataclasses
import re


@dataclasses.dataclass(frozen=True)
class Exclusion:
    heading: str  # the bold heading of the bullet of docs/differences.md
    quote: str  # a sentence of that bullet, verbatim
    how: str  # what the fuzzer does about it


EXCLUSIONS = (
    Exclusion(
        "Names.",
        "Printed dtypes and type names say `minigrad.`",
        "observe.normalise rewrites `torch.`/`torch::` to `minigrad.`/`minigrad::` in PyTorch's exception "
        "messages, warnings, dtype names and node names (`minigrad::autograd::AccumulateGrad`, "
        "`minigrad::autograd::CopySlices`) before comparing.",
    ),
    Exclusion(
        "Devices.",
        "Only the CPU",
        "The generator never draws a device other than the CPU (no device arguments at all).",
    ),
    Exclusion(
        "Dtypes.",
        "float16/32/64, int8/16/32/64, uint8, bool. No complex, bfloat16, sparse,",
        "Inputs are float32, float64, int64, int32, uint8 or bool; no complex, bfloat16, sparse, quantized or "
        "named tensors are drawn.",
    ),
    Exclusion(
        "Random numbers.",
        "it does not reproduce PyTorch's stream",
        "Inputs are NumPy literals handed to both libraries; the random ops of the contract (`rand*`, `randint`, "
        "`randperm`, `uniform_`, `normal_`, `dropout` with p > 0) are not drawn, and modules are not drawn "
        "(their initial weights are random).",
    ),
    Exclusion(
        "`empty`, `Tensor(3, 4)`",
        "return zeros rather than uninitialised memory",
        "`empty`, `empty_like` and the legacy uninitialised constructors are not drawn.",
    ),
    Exclusion(
        "Views written in place.",
        "the view's own node keeps its view name where PyTorch switches it to `AsStridedBackward0`",
        "Where PyTorch's node is `AsStridedBackward0` and minigrad's is a view node (VIEW_NODES), the names "
        "match, and the final graph walk does not go below that node (minigrad's view node keeps its view's "
        "edges); a saved-tensor error that says `output 0 of AsStrided` may name the view op instead. Values, "
        "gradients, versions and the base's `CopySlices` are compared as usual.",
    ),
    Exclusion(
        "Missing names.",
        "A PyTorch name minigrad lacks raises `AttributeError`",
        "Only names of the API contract and of the op registry are drawn; "
        "no `torch.linalg` beyond vector norms, convolutions, JIT or forward-mode AD.",
    ),
    Exclusion(
        "Recurrent layers.",
        "as a Python loop of ordinary ops over time steps",
        "Modules are not drawn (see Random numbers); tests/nn/test_rnn_layers.py compares the recurrent layers' "
        "values, states and gradients with PyTorch's.",
    ),
    Exclusion(
        "Memory layout.",
        "minigrad gives none of PyTorch's warnings about memory layout",
        "Warnings in UNCOMPARED_WARNINGS are dropped from both libraries' lists before comparing.",
    ),
    Exclusion(
        "`__torch_function__`.",
        "Tensor methods called on a plain Tensor (`tensor.matmul(obj)`) do not dispatch to them",
        "Programs use plain tensors only (tests/torch_parity/test_torch_function.py compares the protocol).",
    ),
    Exclusion(
        "Errors.",
        "one extra line starting with `hint:` may follow",
        "Exceptions are compared by type and first line (PyTorch's message starts there; a `hint:` line after "
        "it is allowed).",
    ),
    Exclusion(
        "`einsum`",
        "as one `EinsumBackward` node",
        "`einsum` is not drawn (tests/torch_parity/test_census_names.py compares its values and gradients).",
    ),
    Exclusion(
        "`cdist`",
        "always takes the direct path",
        "`cdist` is not drawn (the registry sweeps compare it on small inputs, where PyTorch takes that path too).",
    ),
    Exclusion(
        "`compile`.",
        "returns the model (or function) itself",
        "`compile` is not drawn (no compiler runs in either library's fuzz programs).",
    ),
    Exclusion(
        "A tangent's own graph.",
        "its node names and structure are not compared with PyTorch's",
        "In forward-mode programs, the node names and graph structure of what was computed from a tangent (the "
        "second-order categories there: FORWARD_UNCOMPARED) are not counted; values, gradients, requires_grad "
        "and is_leaf of tangents are compared as usual.",
    ),
    Exclusion(
        "Attention and padded float32 convolutions at inf and nan.",
        "PyTorch's default CPU kernel is flash attention",
        "Attention and convolutions are drawn with finite inputs in their samples' ranges only (derived.FINITE_ONLY: "
        "no inf, nan or huge values, and no program variables that may hold them); tests/ops/test_extreme_sweeps.py "
        "compares them at extreme inputs (its KERNEL_DEPENDENT lists the samples where PyTorch's kernel, not its "
        "formula, decides).",
    ),
    Exclusion(
        "batch_norm at zeros, subnormal and huge inputs.",
        "its gradient sums run over SIMD lanes (8 or 16 floats, by CPU)",
        "Nothing is normalised: batch_norm programs are compared as any other (the CI set meets none of these "
        "values there); tests/ops/test_extreme_sweeps.py leaves the listed values out (ORDER_DEPENDENT).",
    ),
    Exclusion(
        "maximum, minimum and clamp by a tensor, between +0. and -0.",
        "depends on the CPU's vector width",
        "Nothing is normalised: such programs are compared as any other (a tie of opposite zeros in a tensor of 16 "
        "or more elements is rare in the drawn programs); tests/torch_parity/test_odd_inputs_fuzz7.py checks the "
        "cases that do not depend on the machine.",
    ),
    Exclusion(
        "sgn's zero gradient.",
        "PyTorch hands out the zero tensor itself (whose `tolist()` and `numpy()` raise); minigrad hands out "
        "plain zeros",
        "observe.to_numpy reads a tensor that refuses `numpy()` with `numpy(force=True)`: PyTorch's zero tensor is "
        "compared by its values, plain zeros.",
    ),
    Exclusion(
        "Integer and bool tensors written with a value that requires grad.",
        "minigrad keeps an integer or bool tensor out of the graph whatever is written into it",
        "The generator writes (`__setitem__`, `copy_`) a value that requires grad into an integer or bool tensor "
        "only detached (catalogue.inplace).",
    ),
    Exclusion(
        "An in-place integer division that raises.",
        "so a program that catches the error sees a half-divided `x`",
        "Nothing is normalised: such programs are compared as any other (the tensor printed after the caught error "
        "differs; seed 3506 program 971).",
    ),
    Exclusion(
        "An in-place op whose operand overlaps what it writes, through a view.",
        "minigrad reads the whole operand before writing (as if it were cloned)",
        "Nothing is normalised: such programs are compared as any other (seed 3505 program 118).",
    ),
    Exclusion(
        "float32 `gelu` below −2 and float16 `rsqrt` at large inputs.",
        "minigrad's `gelu` is accurate there (within 1e-5 relative down to −3), so the two differ",
        "Nothing is normalised: such programs are compared as any other (seed 3006 program 494; float16 rsqrt about "
        "5 in 100,000 programs); tests/torch_parity/test_odd_inputs_fuzz7.py keeps float16 gelu inputs within ±2.",
    ),
)

# What forward-mode programs do not count (the "A tangent's own graph" bullet): the graphs of tangents.
FORWARD_UNCOMPARED = frozenset({"second-order node name", "second-order graph"})

# Warnings about PyTorch's strides, which the Memory layout bullet says minigrad does not give.
UNCOMPARED_WARNINGS = ("grad and param do not obey the gradient layout contract",)

# Node names of view ops: the names minigrad's view node may keep where PyTorch says AsStridedBackward0.
VIEW_NODES = frozenset({
    "AliasBackward0", "AsStridedBackward0", "ExpandBackward0", "NarrowBackward0", "PermuteBackward0",
    "SelectBackward0", "SliceBackward0", "SplitBackward0", "SplitWithSizesBackward0", "SqueezeBackward0",
    "SqueezeBackward1", "SqueezeBackward2", "TBackward0", "TransposeBackward0", "UnbindBackward0",
    "UnsqueezeBackward0", "UnsafeViewBackward0", "ViewBackward0",
})


def node_names_match(torch_name: str | None, minigrad_name: str | None) -> bool:
    """Node names after normalisation, with docs/differences.md's "Views written in place" difference."""
    if torch_name == minigrad_name:
        return True
    return torch_name == "AsStridedBackward0" and minigrad_name in VIEW_NODES


_AS_STRIDED_OUTPUT = re.compile(r"which is output (\d+) of AsStrided,")
_VIEW_OUTPUT = re.compile(r"which is output (\d+) of (\w+),")


def error_texts_match(torch_text: str, minigrad_text: str) -> bool:
    """Error first lines, with docs/differences.md's "Views written in place": where PyTorch's saved-tensor error
    says ``output 0 of AsStrided`` (its name for a view written in place), minigrad's may name the view op."""
    if torch_text == minigrad_text:
        return True
    m = _AS_STRIDED_OUTPUT.search(torch_text)
    g = _VIEW_OUTPUT.search(minigrad_text)
    if not m or not g or f"{g.group(2)}Backward0" not in VIEW_NODES or m.group(1) != g.group(1):
        return False
    return torch_text[: m.start()] == minigrad_text[: g.start()] and torch_text[m.end():] == minigrad_text[g.end():]


def stops_graph_walk(torch_name: str, minigrad_name: str) -> bool:
    """True where the graph comparison must not descend (docs/differences.md: "Views written in place")."""
    return torch_name == "AsStridedBackward0" and minigrad_name in VIEW_NODES and minigrad_name != torch_name


# Names of the API contract the generator never draws, each for the bullet of docs/differences.md above that says why.
NOT_DRAWN = {
    "rand": "Random numbers.", "randn": "Random numbers.", "randint": "Random numbers.",
    "randperm": "Random numbers.", "rand_like": "Random numbers.", "randn_like": "Random numbers.",
    "uniform_": "Random numbers.", "normal_": "Random numbers.", "manual_seed": "Random numbers.",
    "Generator": "Random numbers.", "dropout": "Random numbers.", "random_": "Random numbers.",
    "einsum": "`einsum`", "cdist": "`cdist`",
    "empty": "`empty`, `Tensor(3, 4)`", "empty_like": "`empty`, `Tensor(3, 4)`",
}
