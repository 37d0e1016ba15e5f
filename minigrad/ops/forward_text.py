"""The one-line text of a node's forward rule (forward-mode AD), derived from its one declaration.

`viz` shows it beside the tangent's numbers, as it shows `rule_text` beside the gradient's; nothing here is a
second copy of a formula: an elementwise ("derived") rule's text is the backward text with each input's tangent
in place of `grad` (the same formulas compute it, ops/dual.py), a linear or bilinear rule's is the op on the
tangents, a reduction's is the backward text with a gradient of ones, and an explicit forward formula's is read
from its own source (`forward=lambda self_t, result, dim: ...` in the declaration).
"""

from __future__ import annotations

import inspect
import re

_PART = re.compile(r"grad_(\w+(?:\[i\])?) = ")
_NOTE = re.compile(r"^(.*?)(\s{2,}\(.*\))?$")
_GRAD = re.compile(r"\bgrad\b")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[0-9]D)(?=[A-Z])")
_LIBRARY_PREFIX = re.compile(r"\b(?:xp|np)\.")


def op_name(node_name: str) -> str:
    """'MulBackward0' -> 'mul', 'LinalgVectorNormBackward0' -> 'linalg_vector_norm' (the op that records it)."""
    stem = re.sub(r"Backward\d+$", "", node_name.rsplit("::", 1)[-1])
    return _CAMEL.sub("_", stem).lower()


def backward_parts(text: str, inputs: tuple) -> tuple[dict, str]:
    """({input: the expression its `grad_<input> = ...` states}, a trailing note such as "  (result = exp(self))")."""
    body, note = _NOTE.match(text).groups()
    found = list(_PART.finditer(body))
    parts = {}
    for k, m in enumerate(found):
        end = found[k + 1].start() if k + 1 < len(found) else len(body)
        parts[m.group(1)] = body[m.end():end].rstrip().rstrip(",").strip()
    return {name: parts[name] for name in inputs if name in parts}, (note or "").strip()


def _joined(terms: list) -> str:
    out = terms[0]
    for term in terms[1:]:
        out += f" - {term[1:].lstrip()}" if term.startswith("-") else f" + {term}"
    return out


def derived_text(text: str, inputs: tuple) -> str | None:
    """An elementwise rule: Σ over inputs of its backward expression with `<input>_t` for `grad`."""
    parts, note = backward_parts(text, inputs)
    terms = [_GRAD.sub(f"{name}_t", parts[name]) for name in inputs if name in parts]
    if len(inputs) == 1:  # a note about the gradient is about the tangent: "(grad where beta * self > threshold)"
        note = _GRAD.sub(f"{inputs[0]}_t", note)
    if not terms or any(re.search(r"\bgrad_self\b", t) for t in terms):
        return None
    return "result_t = " + _joined(terms) + (f"   {note}" if note else "")


def formula_text(formula) -> str | None:
    """The body of an explicit forward formula, read from its source (`xp.` and `np.` left out)."""
    try:  # the lambda's first line and the lines after it (a lambda's own source is only its first line)
        lines, start = inspect.findsource(formula)
    except (OSError, TypeError):
        return None
    source = "".join(lines[start:start + 12])
    at = source.find("lambda")
    if at < 0:
        return None
    colon = source.find(":", at)
    depth, end = 0, len(source)
    for i in range(colon + 1, len(source)):
        c = source[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                end = i
                break
            depth -= 1
        elif c == "," and depth == 0:
            end = i
            break
    body = re.sub(r"\(\s+", "(", " ".join(source[colon + 1:end].split()))  # (a call broken after its bracket)
    return re.sub(r"(?<![\w.])_(?=[a-z])", "", _LIBRARY_PREFIX.sub("", body)) or None


def forward_text(node_name: str, cls) -> str:
    """The forward rule of the node class `cls` in one line ("" when it has none)."""
    kind, inputs, text = getattr(cls, "_forward_kind", None), cls._inputs, cls._text
    op = op_name(node_name)
    if cls._variadic:
        tangents, primals = [f"{inputs[0]}_t"], [inputs[0]]
    else:
        tangents, primals = [f"{n}_t" for n in inputs], list(inputs)
    if kind == "derived":
        return derived_text(text, inputs) or f"result_t = Σ over inputs of the backward rule, tangent for grad: {text}"
    if kind == "linear":
        return f"result_t = {op}({', '.join(tangents)})   (linear: the same op on the tangents)"
    if kind == "bilinear":
        terms = [f"{op}({', '.join(t if j == i else p for j, (t, p) in enumerate(zip(tangents, primals)))})"
                 for i in range(len(inputs))]
        return "result_t = " + " + ".join(terms)
    if kind == "formula":
        body = formula_text(cls._forward_formula[0])
        return f"result_t = {body}" if body else ""
    parts, _ = backward_parts(text, inputs)
    slopes = ", ".join(f"∂result/∂{n} = {_GRAD.sub('1', parts[n])}" for n in inputs if n in parts)
    summed = " + ".join(f"Σ ∂result/∂{n} · {n}_t" for n in inputs if n in parts)
    if kind == "reduction":
        return f"result_t = {summed} over each reduced group   ({slopes})"
    if not summed:
        return ""
    return f"result_t = {summed}   ({slopes}; a single-number output only: other outputs have no forward rule yet)"
