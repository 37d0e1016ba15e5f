"""Right and wrong answers to every exercise of the course, as a learner would type them.

Each answer is the code of the exercise cell (what replaces the placeholders); running it defines
the names the check receives (``args``). The wrong answers are the mistakes each lesson warns
about and the ones learners made (issue 16); each names the ``reason`` the check must report and a
piece of the hint it must print. ``tests/notebooks/test_exercises.py`` runs them all, and
``notebooks/INSTRUCTORS.md`` quotes what the checker says for each (a test keeps the two in sync).
The grader's tests (tests/grading/) reuse them: the right and wrong answers build the submissions
``make grade`` is tested on, and the ``sneaky`` answers are those the public check lets through but
a hidden test of the autograder catches, each naming that test.

Loaded by path (tests/notebooks/conftest.py, fixture ``answers``): this folder is not a package.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Wrong:
    label: str  # the mistake, in words
    code: str
    reason: str  # CheckResult.reason the check must give
    hint: str  # a piece of the hint (or message) the check must print


@dataclass(frozen=True)
class Sneaky:
    label: str  # what the answer does that the public check cannot see
    code: str
    hidden: str  # the hidden test (a test_... function of the source's hidden= cell) that rejects it


@dataclass(frozen=True)
class Exercise:
    check: str  # the check function's name
    args: tuple[str, ...]  # the names the answer defines, passed to the check in this order
    right: list[str] = field(default_factory=list)  # complete answer cells
    wrong: list[Wrong] = field(default_factory=list)
    sneaky: list[Sneaky] = field(default_factory=list)  # pass the check, fail a hidden test
    wrap: Callable[[str], str] | None = None  # turns a wrong answer's code (a function body) into the cell
    setup: str = ""  # code the lesson runs before the answer (in the same cell or earlier)

    def wrong_code(self, wrong: Wrong) -> str:
        """The complete answer cell of a wrong answer."""
        return self.wrap(wrong.code) if self.wrap is not None else _c(wrong.code)


def _c(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


# -- 1 ---------------------------------------------------------------------------------------------------

EX1 = Exercise("check_leaves", ("leaves", "gets_grad"), setup=_c("""
p = torch.tensor([1.0, 2.0], requires_grad=True)
q = torch.tensor([3.0, 4.0])
r = p * q
s = q * 2
e = (r + s).sum()
"""), right=[
    _c('leaves = {"p", "q", "s"}\ngets_grad = {"p"}'),
    _c('leaves = ["s", "q", "p"]\ngets_grad = ("p",)'),
    _c('leaves = frozenset("pqs")\ngets_grad = {name for name in ["p"]}'),
], wrong=[
    Wrong("r and e counted as leaves", 'leaves = {"p", "q", "r", "s", "e"}\ngets_grad = {"p"}',
          "leaves-has-computed", "r and e are computed from p"),
    Wrong("s, computed from q alone, not seen as a leaf", 'leaves = {"p", "q"}\ngets_grad = {"p"}',
          "leaves-missing-s", "s = q * 2 is computed only from q"),
    Wrong("q, created without requires_grad, not seen as a leaf", 'leaves = {"p", "s"}\ngets_grad = {"p"}',
          "leaves-missing-created", "every tensor made by torch.tensor(...) is a leaf"),
    Wrong("q expected to get a gradient too",  'leaves = {"p", "q", "s"}\ngets_grad = {"p", "q"}',
          "grad-no-requires-grad", "q and s never asked for gradients"),
    Wrong("a non-leaf expected to keep its gradient", 'leaves = {"p", "q", "s"}\ngets_grad = {"p", "r"}',
          "grad-non-leaf", "thrown away unless you call retain_grad()"),
    Wrong("the one gradient forgotten", 'leaves = {"p", "q", "s"}\ngets_grad = set()',
          "grad-missing-p", "which leaf has requires_grad=True?"),
    Wrong("one string instead of a set", 'leaves = "p, q, s"\ngets_grad = {"p"}', "not-a-set",
          "a set of strings"),
    Wrong("the tensors instead of their names", 'leaves = {p, q, s}\ngets_grad = {"p"}', "not-names", "as strings"),
], sneaky=[
    Sneaky("computed from the tensors, not predicted", _c("""
    leaves = {n for n in "pqrse" if globals()[n].is_leaf}
    e.backward()
    gets_grad = {n for n in "pqrse" if globals()[n].is_leaf and globals()[n].grad is not None}
    """), "test_predicted_not_computed"),
])

# -- 2 ---------------------------------------------------------------------------------------------------

EX2 = Exercise("check_count_nodes", ("count_nodes",), right=[
    _c("""
    def count_nodes(root):
        seen, todo = set(), [root]
        while todo:
            node = todo.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            todo.extend(child for child, _ in node.next_functions)
        return len(seen)
    """),
    _c("""
    def count_nodes(root):
        seen = set()

        def visit(node):
            if node is None or node in seen:
                return
            seen.add(node)
            for child, _ in node.next_functions:
                visit(child)

        visit(root)
        return len(seen)
    """),
    _c("""
    from collections import deque

    def count_nodes(root):
        seen, queue = {root}, deque([root])
        while queue:
            for child, _ in queue.popleft().next_functions:
                if child is not None and child not in seen:
                    seen.add(child)
                    queue.append(child)
        return len(seen)
    """),
], wrong=[
    Wrong("paths counted, not nodes (no set of seen nodes)", """
    def count_nodes(root):
        if root is None:
            return 0
        return 1 + sum(count_nodes(child) for child, _ in root.next_functions)
    """, "counts-paths", "keep a set of the nodes you have seen"),
    Wrong("None entries counted as a node", """
    def count_nodes(root):
        seen, todo = set(), [root]
        while todo:
            node = todo.pop()
            if node in seen:
                continue
            seen.add(node)
            if node is not None:
                todo.extend(child for child, _ in node.next_functions)
        return len(seen)
    """, "counts-none", "(None, 0) means 'no gradient goes here'"),
    Wrong("the root left out", """
    def count_nodes(root):
        seen, todo = set(), [child for child, _ in root.next_functions]
        while todo:
            node = todo.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            todo.extend(child for child, _ in node.next_functions)
        return len(seen)
    """, "misses-root", "count root itself too"),
    Wrong("AccumulateGrad nodes left out", """
    def count_nodes(root):
        seen, todo = set(), [root]
        while todo:
            node = todo.pop()
            if node is None or node in seen or not node.next_functions:
                continue
            seen.add(node)
            todo.extend(child for child, _ in node.next_functions)
        return len(seen)
    """, "misses-accumulate", "AccumulateGrad nodes are nodes too"),
    Wrong("None entries not skipped", """
    def count_nodes(root):
        seen, todo = set(), [root]
        while todo:
            node = todo.pop()
            if node in seen:
                continue
            seen.add(node)
            todo.extend(child for child, _ in node.next_functions)
        return len(seen)
    """, "none-entries", "skip None before you look inside it"),
    Wrong("the set returned instead of its size", """
    def count_nodes(root):
        seen, todo = set(), [root]
        while todo:
            node = todo.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            todo.extend(child for child, _ in node.next_functions)
        return seen
    """, "not-int", "return len(seen)"),
    Wrong("no return statement", """
    def count_nodes(root):
        seen, todo = set(), [root]
        while todo:
            node = todo.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            todo.extend(child for child, _ in node.next_functions)
    """, "returns-none", "return len(seen)"),
], sneaky=[
    Sneaky("the counts the check printed, looked up by the graph's size", _c("""
    def count_nodes(root):
        def walk(node):  # told apart by the length of a path walk: 7, 6, 10, 3 and 62 steps
            return 1 if node is None else 1 + sum(walk(child) for child, _ in node.next_functions)

        return {7: 6, 6: 4, 10: 6, 3: 2, 62: 32}[walk(root)]
    """), "test_graphs_the_check_never_shows"),
])

# -- 3 ---------------------------------------------------------------------------------------------------

_JAC_ROWS = """
def jacobian(f, x):
    x = x.detach().requires_grad_()
    m = f(x).numel()
    rows = []
    for i in range(m):
        onehot = torch.zeros(m, dtype=x.dtype)
        onehot[i] = 1.0
        (row,) = torch.autograd.grad(f(x), x, grad_outputs=onehot)
        rows.append(row)
    return {result}
"""

EX3 = Exercise("check_jacobian", ("jacobian",), right=[
    _c(_JAC_ROWS.format(result="torch.stack(rows)")),
    _c("""
    def jacobian(f, x):
        x = x.detach().requires_grad_()
        y = f(x)
        rows = []
        for onehot in torch.eye(y.numel(), dtype=x.dtype):
            x.grad = None
            y.backward(onehot, retain_graph=True)
            rows.append(x.grad.clone())
        return torch.stack(rows)
    """),
    _c("""
    def jacobian(f, x):
        x = x.detach().requires_grad_()
        y = f(x)
        eye = torch.eye(y.numel(), dtype=x.dtype)
        return torch.stack([torch.autograd.grad(y, x, eye[i], retain_graph=True)[0] for i in range(y.numel())])
    """),
], wrong=[
    Wrong("a Python list of rows",  # issue 16
          _JAC_ROWS.format(result="rows"), "list-not-tensor", "torch.stack(rows)"),
    Wrong("a NumPy array", _JAC_ROWS.format(result="torch.stack(rows).numpy()"), "not-a-tensor",
          "return torch.stack(rows)"),
    Wrong("the transpose", _JAC_ROWS.format(result="torch.stack(rows).t()"), "transpose",
          "row i should be the gradient of output i"),
    Wrong("x.grad not cleared between rows", """
    def jacobian(f, x):
        x = x.detach().requires_grad_()
        rows = []
        for onehot in torch.eye(f(x).numel(), dtype=x.dtype):
            f(x).backward(onehot)
            rows.append(x.grad.clone())
        return torch.stack(rows)
    """, "accumulated", "backward() adds into x.grad"),
    Wrong("all ones instead of one-hot vectors", """
    def jacobian(f, x):
        x = x.detach().requires_grad_()
        m = f(x).numel()
        return torch.stack([torch.autograd.grad(f(x), x, grad_outputs=torch.ones(m, dtype=x.dtype))[0]
                            for _ in range(m)])
    """, "ones-not-onehot", "one-hot: 1 at position i"),
    Wrong("one graph, walked once per row without retain_graph", """
    def jacobian(f, x):
        x = x.detach().requires_grad_()
        y = f(x)
        rows = [torch.autograd.grad(y, x, onehot)[0] for onehot in torch.eye(y.numel(), dtype=x.dtype)]
        return torch.stack(rows)
    """, "graph-freed", "compute f(x) again for every row"),
    Wrong("the rows flattened into one vector", _JAC_ROWS.format(result="torch.cat(rows)"), "shape",
          "one row per output element"),
], sneaky=[
    Sneaky("the library's Jacobian", _c("""
    def jacobian(f, x):
        x = x.detach().requires_grad_()
        return torch.autograd.functional.jacobian(f, x)
    """), "test_rows_from_vjps_not_the_library"),
])

# -- 4 ---------------------------------------------------------------------------------------------------

_TRAIN = """
def train(x, target, steps=20, lr=0.05):
    w = torch.tensor(1.0, requires_grad=True)
{body}
    return w
"""


def _train(body: str) -> str:
    return _c(_TRAIN.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")))


EX4 = Exercise("check_train", ("train",), wrap=_train, right=[
    _train("""
    for _ in range(steps):
        loss = (w * x - target) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
    """),
    _train("""
    for _ in range(steps):
        loss = (w * x - target) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            w.grad.zero_()
    """),
    _train("""
    optimizer = torch.optim.SGD([w], lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        ((w * x - target) ** 2).backward()
        optimizer.step()
    """),
], wrong=[
    Wrong("the forward pass outside the loop, with retain_graph=True", """
    pred = w * x
    for _ in range(steps):
        loss = (pred - target) ** 2
        loss.backward(retain_graph=True)
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
    """, "stale-forward", "the prediction is stale"),
    Wrong("the forward pass outside the loop, without retain_graph", """
    pred = w * x
    for _ in range(steps):
        loss = (pred - target) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
    """, "stale-forward", "every step needs a fresh forward pass"),
    Wrong("gradients never cleared", """
    for _ in range(steps):
        loss = (w * x - target) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
    """, "accumulating", "gradients pile up"),
    Wrong("the update outside no_grad", """
    for _ in range(steps):
        loss = (w * x - target) ** 2
        loss.backward()
        w -= lr * w.grad
        w.grad = None
    """, "no-no-grad", "`with torch.no_grad():`"),  # issue 16
    Wrong("w rebound out of place (w = w - ...)", """
    for _ in range(steps):
        loss = (w * x - target) ** 2
        loss.backward()
        w = w - lr * w.grad
    """, "rebinds-w", "update the leaf in place"),
    Wrong("w rebound under no_grad", """
    for _ in range(steps):
        loss = (w * x - target) ** 2
        loss.backward()
        with torch.no_grad():
            w = w - lr * w.grad
    """, "lost-requires-grad", "update w in place"),
    Wrong("the gradient cleared before the update", """
    for _ in range(steps):
        loss = (w * x - target) ** 2
        loss.backward()
        w.grad = None
        with torch.no_grad():
            w -= lr * w.grad
    """, "grad-none-at-update", "clear the gradient after the update"),
    Wrong("grad.zero_() before the first backward", """
    for _ in range(steps):
        w.grad.zero_()
        loss = (w * x - target) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
    """, "zero-before-backward", "w.grad is None until the first backward()"),
], sneaky=[
    Sneaky("the check's x = 2 written into the loss", _train("""
    for _ in range(steps):
        loss = (w * 2 - target) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
    """), "test_other_data"),
])

# -- 5 ---------------------------------------------------------------------------------------------------


def _hook(body: str) -> str:
    return _c("def clip_hook(grad):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


EX5 = Exercise("check_clip_hook", ("clip_hook",), wrap=_hook, right=[
    _hook("return grad.clamp(-1.0, 1.0)"),
    _hook("return torch.clamp(grad, min=-1, max=1)"),
    _hook("return grad.clone().clamp_(-1, 1)"),
    _hook("return torch.where(grad > 1, torch.ones_like(grad), torch.where(grad < -1, -torch.ones_like(grad), grad))"),
], wrong=[
    Wrong("clamp_ in place, nothing returned",  # issue 16
          "grad.clamp_(-1, 1)", "in-place",
          "must not modify its argument"),
    Wrong("clamp_ in place, returned", "return grad.clamp_(-1, 1)", "in-place", "must not modify its argument"),
    Wrong("the clipped tensor computed but not returned", "clipped = grad.clamp(-1, 1)", "returns-none",
          "a hook that returns None only looks"),
    Wrong("the gradient returned unchanged", "return grad", "unchanged", "clamp every element"),
    Wrong("clipping by norm", "return grad / grad.norm()", "clips-norm", "each element is limited to [-1, 1]"),
    Wrong("the wrong range", "return grad.clamp(0, 1)", "wrong-range", "grad.clamp(-1.0, 1.0)"),
    Wrong("a NumPy array", "return grad.numpy().clip(-1, 1)", "not-a-tensor", "return a tensor"),
    Wrong("the sign", "return grad.sign()", "sign", "clamp, do not take the sign"),
], sneaky=[
    Sneaky("a NumPy round trip",
           "import numpy as np\n\n\n" + _hook("return torch.tensor(np.clip(grad.detach().numpy(), -1, 1))"),
           "test_double_backward"),
])

# -- 6a --------------------------------------------------------------------------------------------------

_RIGHT_QUIZ = {"a": False, "b": False, "c": True, "d": True, "e": False, "f": True}


def _quiz(**changes: object) -> str:
    answers = {**_RIGHT_QUIZ, **changes}
    return f"answers = {answers!r}\n"


_COMPUTED_QUIZ = _c("""
    from minigrad.autograd import Variable

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    answers = {}
    with torch.no_grad():
        answers["a"] = (x * 2).requires_grad
    answers["b"] = (x.detach() * 2).requires_grad
    with torch.no_grad():
        r = x
    answers["c"] = r.requires_grad
    with torch.set_grad_enabled(False):
        answers["d"] = (x * 2).requires_grad_().requires_grad
    with torch.inference_mode():
        answers["e"] = (x + 1).requires_grad
    answers["f"] = (Variable(torch.ones(2), volatile=True) * x).requires_grad
    """)

EX6A = Exercise("check_grad_quiz", ("answers",), right=[
    _quiz(),
    _c("answers = dict(a=False, b=False, c=True, d=True, e=False, f=True)"),
    _c("""
    answers = {}
    for key in "abe":
        answers[key] = False
    for key in "cdf":
        answers[key] = True
    """),
], sneaky=[
    Sneaky("computed by running the snippets", _COMPUTED_QUIZ, "test_predicted_not_computed"),
], wrong=[
    Wrong("r = x thought to be switched off by no_grad", _quiz(c=False), "wrong-c", "r IS x"),
    Wrong("requires_grad_() thought impossible under no_grad", _quiz(d=False), "wrong-d", "requires_grad_()"),
    Wrong("inference_mode thought to record", _quiz(e=True), "wrong-e", "stricter no_grad"),
    Wrong("volatile thought to still work", _quiz(f=False), "wrong-f", "volatile does nothing any more"),
    Wrong("everything True", "answers = {k: True for k in 'abcdef'}\n", "wrong-a", "no_grad() records nothing"),
    Wrong("strings instead of booleans", _quiz(a="False"), "not-bool", "use the booleans True and False"),
    Wrong("a key missing", 'answers = {"a": False, "b": False, "c": True, "d": True, "e": False}\n', "missing-keys",
          "one key per snippet"),
])

# -- 6b --------------------------------------------------------------------------------------------------

_EVAL_BODY = """
scores = inputs @ w
loss = F.binary_cross_entropy_with_logits(scores, labels)
accuracy = ((scores > 0).float() == labels).float().mean()
"""


def _evaluate(before: str = "", after: str = "return loss, accuracy", wrap: str | None = None,
              decorator: str = "") -> str:
    body = textwrap.dedent(_EVAL_BODY).strip("\n")
    if wrap is not None:
        body = wrap + "\n" + textwrap.indent(body, "    ")
    text = (decorator + "\n" if decorator else "") + "def evaluate(w, inputs, labels):\n"
    for part in (before, body, after):
        if part:
            text += textwrap.indent(textwrap.dedent(part).strip("\n"), "    ") + "\n"
    return text


EX6B = Exercise("check_evaluate", ("evaluate",), right=[
    _evaluate(wrap="with torch.no_grad():"),
    _evaluate(wrap="with torch.inference_mode():"),
    _evaluate(wrap="with torch.set_grad_enabled(False):", after="return loss.item(), accuracy.item()"),
    _evaluate(before="w = w.detach()"),
    _evaluate(decorator="@torch.no_grad()"),
], wrong=[
    Wrong("no_grad forgotten", _evaluate(), "records-graph", "compute everything inside `with torch.no_grad():`"),
    Wrong("the graph detached at the end", _evaluate(after="return loss.detach(), accuracy"), "recorded-then-dropped",
          "come too late"),
    Wrong(".item() at the end instead of no_grad", _evaluate(after="return loss.item(), accuracy.item()"),
          "recorded-then-dropped", "under torch.no_grad() nothing is recorded"),
    Wrong("grad mode switched off and never back on", _evaluate(before="torch.set_grad_enabled(False)"),
          "mode-left-off", "a plain torch.set_grad_enabled(False) call does not"),
    Wrong("the accuracy of the wrong threshold", _evaluate(
        wrap="with torch.no_grad():", after="accuracy = ((scores > 0.5).float() == labels).float().mean()\n"
                                            "return loss, accuracy"), "wrong-accuracy", "> 0"),
    Wrong("the loss of the probabilities (sigmoid twice)", _evaluate(
        wrap="with torch.no_grad():",
        after="loss = F.binary_cross_entropy_with_logits(scores.sigmoid(), labels)\nreturn loss, accuracy"),
        "wrong-loss", "binary_cross_entropy_with_logits(inputs @ w, labels)"),
    Wrong("only the accuracy returned", _evaluate(wrap="with torch.no_grad():", after="return accuracy"),
          "not-a-pair", "return loss, accuracy"),
], sneaky=[
    Sneaky("w switched off in place", _evaluate(before="w.requires_grad_(False)"), "test_leaves_w_alone"),
    Sneaky("grad mode forced back on", _evaluate(before="torch.set_grad_enabled(False)",
                                                 after="torch.set_grad_enabled(True)\nreturn loss, accuracy"),
           "test_keeps_the_callers_mode"),
])

# -- 7 ---------------------------------------------------------------------------------------------------


def _sigmoid(forward: str, backward: str) -> str:
    return (
        "class MySigmoid(Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n" + textwrap.indent(textwrap.dedent(forward).strip("\n"), " " * 8) + "\n\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad_output):\n" + textwrap.indent(textwrap.dedent(backward).strip("\n"), " " * 8) + "\n"
    )


_SAVE_RESULT = """
result = 1 / (1 + torch.exp(-x))
ctx.save_for_backward(result)
return result
"""
_USE_RESULT = """
(result,) = ctx.saved_tensors
return grad_output * result * (1 - result)
"""

EX7 = Exercise("check_sigmoid", ("MySigmoid",), right=[
    _sigmoid(_SAVE_RESULT, _USE_RESULT),
    _sigmoid("result = torch.sigmoid(x)\nctx.save_for_backward(result)\nreturn result",
             "(s,) = ctx.saved_tensors\nreturn grad_output * (s - s * s)"),
    _sigmoid("result = (torch.tanh(x / 2) + 1) / 2\nctx.save_for_backward(x, result)\nreturn result",
             "_, s = ctx.saved_tensors\nreturn grad_output * s * (1 - s)"),
], wrong=[
    Wrong("the input saved instead of the result",  # issue 16
          _sigmoid("ctx.save_for_backward(x)\nreturn 1 / (1 + torch.exp(-x))",
                   "(x,) = ctx.saved_tensors\ns = 1 / (1 + torch.exp(-x))\nreturn grad_output * s * (1 - s)"),
          "saved-input", "ctx.save_for_backward(result)"),
    Wrong("the result kept as a ctx attribute",
          _sigmoid("ctx.result = 1 / (1 + torch.exp(-x))\nreturn ctx.result",
                   "return grad_output * ctx.result * (1 - ctx.result)"),
          "tensor-on-ctx", "tensors go through ctx.save_for_backward(result)"),
    Wrong("grad_output ignored",
          _sigmoid(_SAVE_RESULT, "(result,) = ctx.saved_tensors\nreturn result * (1 - result)"),
          "ignores-grad-output", "multiply by grad_output"),
    Wrong("the sign of the exponent",
          _sigmoid("result = 1 / (1 + torch.exp(x))\nctx.save_for_backward(result)\nreturn result", _USE_RESULT),
          "sign", "the exponent is -x"),
    Wrong("a derivative without the (1 - s) factor",
          _sigmoid(_SAVE_RESULT, "(result,) = ctx.saved_tensors\nreturn grad_output * result"),
          "wrong-backward", "sigma(x) * (1 - sigma(x))"),
    Wrong("two gradients for one input",
          _sigmoid(_SAVE_RESULT, "(result,) = ctx.saved_tensors\nreturn grad_output * result * (1 - result), "
                                 "grad_output"),
          "wrong-count", "one gradient per input of forward"),
    Wrong("nothing saved at all",
          _sigmoid("return 1 / (1 + torch.exp(-x))", "return grad_output"),
          "nothing-saved", "ctx.save_for_backward(result)"),
], sneaky=[
    Sneaky("exp(x) / (1 + exp(x)), nan for large x",
           _sigmoid("result = torch.exp(x) / (1 + torch.exp(x))\nctx.save_for_backward(result)\nreturn result",
                    _USE_RESULT), "test_large_inputs"),
])

# -- 8 ---------------------------------------------------------------------------------------------------


def _hvp(body: str) -> str:
    return _c("def hvp(f, x, v):\n    x = x.detach().requires_grad_()\n"
              + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


EX8 = Exercise("check_hvp", ("hvp",), wrap=_hvp, right=[
    _hvp("(g,) = torch.autograd.grad(f(x), x, create_graph=True)\n(hv,) = torch.autograd.grad(g @ v, x)\nreturn hv"),
    _hvp("(g,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
         "return torch.autograd.grad(g, x, grad_outputs=v)[0]"),
    _hvp("g = torch.autograd.grad(f(x), x, create_graph=True)[0]\nreturn torch.autograd.grad((g * v).sum(), x)[0]"),
], wrong=[
    Wrong("the full Hessian",  # issue 16
          "H = torch.autograd.functional.hessian(f, x)\nreturn H @ v",
          "full-hessian", "the Hessian is never built"),
    Wrong("the Hessian built row by row", """
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    rows = [torch.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(len(x))]
    return torch.stack(rows) @ v
    """, "full-hessian", "two passes are enough"),
    Wrong("create_graph forgotten", "(g,) = torch.autograd.grad(f(x), x)\n(hv,) = torch.autograd.grad(g @ v, x)\n"
                                    "return hv", "no-create-graph", "create_graph=True"),
    Wrong("the tuple returned", "(g,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
                                "return torch.autograd.grad(g @ v, x)", "tuple", "unpack it"),
    Wrong("the gradient times v", "(g,) = torch.autograd.grad(f(x), x, create_graph=True)\nreturn g * v",
          "elementwise", "differentiate the scalar g @ v"),
    Wrong("v applied after the second pass", "(g,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
                                              "return torch.autograd.grad(g.sum(), x)[0] * v", "v-after",
          "v goes into the second pass"),
    Wrong("backward() twice into x.grad", "f(x).backward(create_graph=True)\n(x.grad @ v).backward()\n"
                                         "return x.grad.detach()", "accumulated-grad", "backward() adds into x.grad"),
    Wrong("the gradient returned", "(g,) = torch.autograd.grad(f(x), x, create_graph=True)\nreturn g.detach()",
          "returned-gradient", "g is pass 1"),
], sneaky=[
    Sneaky("the library's hvp", _hvp("return torch.autograd.functional.hvp(f, x, v)[1]"),
           "test_two_passes_not_the_library"),
])

# -- 9 ---------------------------------------------------------------------------------------------------


def _softplus(body: str) -> str:
    return _c("def softplus_fixed(x):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


EX9 = Exercise("check_softplus", ("softplus_fixed",), wrap=_softplus, right=[
    _softplus("y = x.exp()\nreturn (y + 1).log()"),
    _softplus("return torch.log1p(torch.exp(x))"),
    _softplus("y = x.exp().clone()\ny += 1\nreturn y.log()"),
], wrong=[
    Wrong("the buggy version itself (y += 1)", "y = x.exp()\ny += 1\nreturn y.log()", "inplace-saved",
          "write y = y + 1, not y += 1"),
    Wrong("add_ instead of +=", "y = x.exp()\ny.add_(1)\nreturn y.log()", "inplace-saved", "exp saves its result"),
    Wrong("x changed in place", "x.exp_()\nreturn (x + 1).log()", "modified-x", "leave x alone"),
    Wrong("the error silenced with .data", "y = x.exp()\ny.data += 1\nreturn y.log()", "data-trick",
          "hides the change from the version counter"),
    Wrong("the graph cut with detach()", "return (x.detach().exp() + 1).log()", "no-graph",
          "the gradient has to flow back to x"),
    Wrong("computed under no_grad", "with torch.no_grad():\n    return (x.exp() + 1).log()", "no-graph",
          "do not use no_grad()"),
    Wrong("the wrong formula", "return x.exp().log() + 1", "wrong-values", "softplus(x) = log(1 + e^x)"),
], sneaky=[
    Sneaky("the values and slopes the check printed", "import numpy as np\n\n\n" + _softplus("""
    printed = np.array([-2.0, -0.5, 0.0, 1.0, 3.0])  # the check's x, from its message
    values = torch.tensor(np.log1p(np.exp(printed)), dtype=x.dtype)
    slopes = torch.tensor(1 / (1 + np.exp(-printed)), dtype=x.dtype)
    return values + (x - x.detach()) * slopes
    """), "test_other_input"),
])

# -- 10 --------------------------------------------------------------------------------------------------


def _step(body: str) -> str:
    return _c("def train_step(model, loss_fn, optimizer, xb, yb):\n"
              + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


EX10 = Exercise("check_train_step", ("train_step",), wrap=_step, right=[
    _step("optimizer.zero_grad()\nloss = loss_fn(model(xb), yb)\nloss.backward()\noptimizer.step()\n"
          "return loss.item()"),
    _step("model.zero_grad()\nloss = loss_fn(model(xb), yb)\nloss.backward()\noptimizer.step()\nreturn float(loss)"),
    _step("loss = loss_fn(model(xb), yb)\nloss.backward()\noptimizer.step()\noptimizer.zero_grad(set_to_none=False)\n"
          "return loss.item()"),
], wrong=[
    Wrong("zero_grad forgotten", "loss = loss_fn(model(xb), yb)\nloss.backward()\noptimizer.step()\n"
                                 "return loss.item()", "no-zero-grad", ".grad accumulates"),
    Wrong("zero_grad between backward and step", "loss = loss_fn(model(xb), yb)\nloss.backward()\n"
                                                 "optimizer.zero_grad()\noptimizer.step()\nreturn loss.item()",
          "zeroed-before-step", "throws the gradient away"),
    Wrong("step before backward", "optimizer.zero_grad()\nloss = loss_fn(model(xb), yb)\noptimizer.step()\n"
                                  "loss.backward()\nreturn loss.item()", "step-before-backward", "backward first"),
    Wrong("backward forgotten", "optimizer.zero_grad()\nloss = loss_fn(model(xb), yb)\noptimizer.step()\n"
                                "return loss.item()", "no-backward", "loss.backward() fills"),
    Wrong("step forgotten", "optimizer.zero_grad()\nloss = loss_fn(model(xb), yb)\nloss.backward()\n"
                            "return loss.item()", "no-step", "optimizer.step() is what changes"),
    Wrong("the loss tensor returned", "optimizer.zero_grad()\nloss = loss_fn(model(xb), yb)\nloss.backward()\n"
                                      "optimizer.step()\nreturn loss", "not-a-number", "return loss.item()"),
    Wrong("the loss after the step returned", "optimizer.zero_grad()\nloss = loss_fn(model(xb), yb)\n"
                                              "loss.backward()\noptimizer.step()\n"
                                              "return loss_fn(model(xb), yb).item()", "wrong-loss",
          "before optimizer.step()"),
], sneaky=[
    Sneaky("cross-entropy written in, loss_fn ignored", _step(
        "optimizer.zero_grad()\nloss = F.cross_entropy(model(xb), yb)\nloss.backward()\noptimizer.step()\n"
        "return loss.item()"), "test_other_loss_and_optimizer"),
])


# -- 11 ---------------------------------------------------------------------------------------------------


def _bn(body: str) -> str:
    return _c("def batchnorm_backward(dhpreact, bnraw, bnvar_inv, bngain):\n"
              + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


_BN_SIDES = "dbngain = (bnraw * dhpreact).sum(0, keepdim=True)\ndbnbias = dhpreact.sum(0, keepdim=True)\n"
_BN_FUSED = ("n = dhpreact.shape[0]\n" + _BN_SIDES + "dhprebn = bngain * bnvar_inv / n * (n * dhpreact"
             " - dhpreact.sum(0) - n / (n - 1) * bnraw * (dhpreact * bnraw).sum(0))\n")

EX11 = Exercise("check_batchnorm_backward", ("batchnorm_backward",), wrap=_bn, right=[
    _bn(_BN_FUSED + "return dhprebn, dbngain, dbnbias"),
    _bn("""
        n = dhpreact.shape[0]
        dbnraw = bngain * dhpreact
        dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
        dbnbias = dhpreact.sum(0, keepdim=True)
        bndiff = bnraw / bnvar_inv
        dbndiff = bnvar_inv * dbnraw
        dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
        dbnvar = -0.5 * bnvar_inv**3 * dbnvar_inv
        dbndiff2 = torch.ones_like(bndiff) / (n - 1) * dbnvar
        dbndiff = dbndiff + 2 * bndiff * dbndiff2
        dbnmeani = -dbndiff.sum(0, keepdim=True)
        dhprebn = dbndiff + torch.ones_like(dbndiff) / n * dbnmeani
        return dhprebn, dbngain, dbnbias
    """),
], wrong=[
    Wrong("the variance divided by n", "n = dhpreact.shape[0]\n" + _BN_SIDES + "dhprebn = bngain * bnvar_inv / n * "
          "(n * dhpreact - dhpreact.sum(0) - bnraw * (dhpreact * bnraw).sum(0))\nreturn dhprebn, dbngain, dbnbias",
          "bessel", "Bessel's correction"),
    Wrong("only the direct path", _BN_SIDES + "return bngain * bnvar_inv * dhpreact, dbngain, dbnbias",
          "direct-only", "three ways"),
    Wrong("dbngain without keepdim", _BN_FUSED + "return dhprebn, (bnraw * dhpreact).sum(0), dbnbias",
          "gain-shape", "keepdim=True"),
    Wrong("dbnbias averaged", _BN_FUSED + "return dhprebn, dbngain, dhpreact.mean(0, keepdim=True)",
          "bias", "summed over the batch"),
    Wrong("dbngain without bnraw", _BN_FUSED + "return dhprebn, dhpreact.sum(0, keepdim=True), dbnbias",
          "gain", "bnraw * dhpreact"),
    Wrong("two gradients", _BN_FUSED + "return dhprebn, dbngain", "not-three", "a tuple of three"),
], sneaky=[
    Sneaky("the check's batch size written in", _bn(_BN_FUSED.replace("dhpreact.shape[0]", "8  # the check's batch")
                                                    + "return dhprebn, dbngain, dbnbias"),
           "test_other_batches_float32"),
    Sneaky("the forward rebuilt and differentiated by autograd", _bn("""
        with torch.enable_grad():
            bndiff = (bnraw / bnvar_inv).detach().requires_grad_()
            gain = bngain.detach().requires_grad_()
            bias = torch.zeros_like(bngain).requires_grad_()
            n = bndiff.shape[0]
            centred = bndiff - bndiff.mean(0, keepdim=True)
            var_inv = ((centred**2).sum(0, keepdim=True) / (n - 1) + 1e-5) ** -0.5
            hpreact = gain * centred * var_inv + bias
            return torch.autograd.grad(hpreact, (bndiff, gain, bias), dhpreact)
    """), "test_by_hand_not_by_autograd"),
])


# -- 12 ---------------------------------------------------------------------------------------------------


def _swish(body: str, forward: str = "ctx.save_for_backward(x, beta)\nreturn x * torch.sigmoid(beta * x)") -> str:
    """The MySwish cell around a backward body; a body 'FORWARD\n---\nBACKWARD' brings its own forward."""
    if "\n---\n" in body:
        forward, body = body.split("\n---\n", 1)
    return _c("class MySwish(Function):\n    @staticmethod\n    def forward(ctx, x, beta):\n"
              + textwrap.indent(textwrap.dedent(forward).strip("\n"), "        ")
              + "\n\n    @staticmethod\n    def backward(ctx, grad_output):\n"
              + textwrap.indent(textwrap.dedent(body).strip("\n"), "        "))


_SWISH_S = "x, beta = ctx.saved_tensors\ns = torch.sigmoid(beta * x)\n"
_SWISH_BETA = "grad_beta = (grad_output * x * x * s * (1 - s)).sum()\n"

EX12 = Exercise("check_swish", ("MySwish",), wrap=_swish, right=[
    _swish(_SWISH_S + "grad_x = grad_output * (s + beta * x * s * (1 - s))\n" + _SWISH_BETA
           + "return grad_x, grad_beta"),
    _swish("x, beta = ctx.saved_tensors\ns = 1 / (1 + torch.exp(-beta * x))\nds = s * (1 - s)\n"
           "return grad_output * (s + x * beta * ds), (grad_output * x**2 * ds).sum()"),
    _swish("y, x, beta = ctx.saved_tensors\ns = y / x\n"
           "return grad_output * (s + beta * y * (1 - s)), (grad_output * x * y * (1 - s)).sum()",
           forward="y = x * torch.sigmoid(beta * x)\nctx.save_for_backward(y, x, beta)\nreturn y"),
], wrong=[
    Wrong("the planted bug: one term of the product rule", _SWISH_S + "grad_x = grad_output * s\n" + _SWISH_BETA
          + "return grad_x, grad_beta", "grad-x", "product rule"),
    Wrong("beta's gradient without one x", _SWISH_S + "grad_x = grad_output * (s + beta * x * s * (1 - s))\n"
          "return grad_x, (grad_output * x * s * (1 - s)).sum()", "grad-beta", "x * x * s * (1 - s)"),
    Wrong("no gradient for beta", _SWISH_S + "return grad_output * (s + beta * x * s * (1 - s))",
          "wrong-count", "two here, for x and for beta"),
    Wrong("a forward without beta", "ctx.save_for_backward(x, beta)\nreturn x * torch.sigmoid(x)\n---\n"
          + _SWISH_S + "return grad_output * (s + beta * x * s * (1 - s)), (grad_output * x * x * s * (1 - s)).sum()",
          "forward", "x * sigmoid(beta * x)"),
], sneaky=[
    Sneaky("sigmoid as exp(bx) / (1 + exp(bx)), nan once exp overflows",
           _swish("x, beta = ctx.saved_tensors\ne = torch.exp(beta * x)\ns = e / (1 + e)\n"
                  "return grad_output * (s + beta * x * s * (1 - s)), (grad_output * x * x * s * (1 - s)).sum()",
                  forward="ctx.save_for_backward(x, beta)\ne = torch.exp(beta * x)\nreturn x * e / (1 + e)"),
           "test_large_float32_matrix"),
    Sneaky("backward asks autograd for the gradients", _swish("""
        x, beta = ctx.saved_tensors
        with torch.enable_grad():
            x, beta = x.detach().requires_grad_(), beta.detach().requires_grad_()
            y = x * torch.sigmoid(beta * x)
            return torch.autograd.grad(y, (x, beta), grad_output)
    """), "test_by_hand_not_by_autograd"),
])

# -- 13 ---------------------------------------------------------------------------------------------------

_DUAL_SETUP = _c("""
import numpy as np


class Dual:
    def __init__(self, value, tangent=0.0):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __mul__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(self.value * other.value, self.tangent * other.value + self.value * other.tangent)

    __radd__, __rmul__ = __add__, __mul__

    def sin(self):
        return Dual(np.sin(self.value), np.cos(self.value) * self.tangent)
""")


def _divide(body: str) -> str:
    return _c("def divide(a, b):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


EX13A = Exercise("check_dual_divide", ("divide", "Dual"), setup=_DUAL_SETUP, wrap=_divide, right=[
    _divide("return Dual(a.value / b.value, (a.tangent * b.value - a.value * b.tangent) / b.value**2)"),
    _divide("return Dual(a.value / b.value, a.tangent / b.value - a.value * b.tangent / (b.value * b.value))"),
    _divide("""
        inverse = Dual(1 / b.value, -b.tangent / b.value**2)  # the tangent of 1/b is -b'/b²
        return a * inverse
    """),
], wrong=[
    Wrong("the two terms swapped", "return Dual(a.value / b.value, (a.value * b.tangent - a.tangent * b.value) / "
          "b.value**2)", "sign", "a' b comes first"),
    Wrong("b not squared", "return Dual(a.value / b.value, (a.tangent * b.value - a.value * b.tangent) / b.value)",
          "not-squared", "divides by b²"),
    Wrong("b's tangent left out", "return Dual(a.value / b.value, a.tangent / b.value)", "ignores-b", "b moves too"),
    Wrong("the tangents divided", "return Dual(a.value / b.value, a.tangent / b.tangent)", "divided-tangents",
          "tangents do not divide"),
    Wrong("the product rule's plus sign", "return Dual(a.value / b.value, (a.tangent * b.value + a.value * "
          "b.tangent) / b.value**2)", "plus", "the second term is subtracted"),
    Wrong("a tuple, not a Dual", "return a.value / b.value, (a.tangent * b.value - a.value * b.tangent) / b.value**2",
          "not-dual", "return Dual(value, tangent)"),
    Wrong("the values multiplied", "return Dual(a.value * b.value, (a.tangent * b.value - a.value * b.tangent) / "
          "b.value**2)", "value", "a.value / b.value"),
], sneaky=[
    Sneaky("the quotient written into a, which is returned", _divide("""
        a.tangent = (a.tangent * b.value - a.value * b.tangent) / b.value**2
        a.value = a.value / b.value
        return a
    """), "test_the_inputs_stay_unchanged"),
    Sneaky("math.pow, for numbers only", _divide("""
        import math

        return Dual(a.value / b.value, (a.tangent * b.value - a.value * b.tangent) / math.pow(b.value, 2))
    """), "test_arrays_of_values"),
])

_FUNC_SETUP = _c("""
from minigrad.func import grad, jacfwd, jacrev, jvp, vjp, vmap
""")


def _jac_fwd(body: str) -> str:
    return _c("def jacobian_forward(f, x):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


_COLUMNS = """
columns = []
for j in range(x.numel()):
    e = torch.zeros_like(x)
    e[j] = 1.0
    columns.append(jvp(f, (x,), (e,))[1])
"""

EX13B = Exercise("check_jacobian_forward", ("jacobian_forward",), setup=_FUNC_SETUP, wrap=_jac_fwd, right=[
    _jac_fwd(_COLUMNS + "return torch.stack(columns, dim=1)"),
    _jac_fwd("""
        basis = torch.eye(x.numel(), dtype=x.dtype)
        return torch.stack([jvp(f, (x,), (basis[j],))[1] for j in range(x.numel())]).T
    """),
    _jac_fwd("""
        import minigrad.autograd.forward_ad as fwAD

        columns = []
        for j in range(len(x)):
            e = torch.zeros_like(x)
            e[j] = 1
            with fwAD.dual_level():
                columns.append(fwAD.unpack_dual(f(fwAD.make_dual(x, e))).tangent)
        return torch.stack(columns, dim=1)
    """),
], wrong=[
    Wrong("the columns stacked as rows", _COLUMNS + "return torch.stack(columns)", "transposed",
          "stack them along dim 1"),
    Wrong("a list of columns", _COLUMNS + "return columns", "not-a-tensor", "torch.stack(columns, dim=1)"),
    Wrong("jacfwd itself", "return jacfwd(f)(x)", "one-pass", "one jvp per input"),
    Wrong("one vjp, then a row per output", """
        out, vjp_fn = vjp(f, x)
        return torch.stack([vjp_fn(e)[0] for e in torch.eye(out.numel(), dtype=x.dtype)])
    """, "one-pass", "one jvp per input"),
    Wrong("a vjp per output: reverse mode's count", """
        m = f(x).numel()
        rows = []
        for i in range(m):
            e = torch.zeros(m, dtype=x.dtype)
            e[i] = 1.0
            rows.append(vjp(f, x)[1](e)[0])
        return torch.stack(rows)
    """, "reverse", "one pass per input"),
    Wrong("a tangent of ones for every column", """
        columns = [jvp(f, (x,), (torch.ones_like(x),))[1] for _ in range(x.numel())]
        return torch.stack(columns, dim=1)
    """, "wrong-values", "one-hot"),
    Wrong("the columns concatenated", _COLUMNS + "return torch.cat(columns)", "shape", "stacked along dim 1"),
], sneaky=[
    Sneaky("a squeezed result, (n,) for one output",
           _jac_fwd(_COLUMNS + "return torch.stack(columns, dim=1).squeeze()"),
           "test_a_wide_function_with_one_output"),
])


def _norms(body: str) -> str:
    return _c("def per_sample_grad_norms(loss_fn, params, xs, ys):\n"
              + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


_VMAPPED = "grads = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, xs, ys)\n"  # no indent: a body's first line

EX13C = Exercise("check_grad_norms", ("per_sample_grad_norms",), setup=_FUNC_SETUP, wrap=_norms, right=[
    _norms(_VMAPPED + _c("""
        squares = sum((g.reshape(len(xs), -1) ** 2).sum(dim=1) for g in grads.values())
        return squares.sqrt()
    """)),
    _norms(_VMAPPED + "return torch.cat([g.flatten(1) for g in grads.values()], dim=1).norm(dim=1)"),
    _norms("""
        def norm_of(x, y):
            g = grad(loss_fn)(params, x, y)
            return sum((t**2).sum() for t in g.values()).sqrt()

        return vmap(norm_of)(xs, ys)
    """),
], wrong=[
    Wrong("the batch's gradient, not each sample's", """
        def batch_loss(p):
            return vmap(loss_fn, in_dims=(None, 0, 0))(p, xs, ys).mean()

        grads = grad(batch_loss)(params)
        return sum((g**2).sum() for g in grads.values()).sqrt()
    """, "batch-gradient", "one norm per sample"),
    Wrong("vmap over the params too", """
        grads = vmap(grad(loss_fn))(params, xs, ys)
        return sum((g.reshape(len(xs), -1) ** 2).sum(dim=1) for g in grads.values()).sqrt()
    """, "in-dims", "in_dims=(None, 0, 0)"),
    Wrong("the squared norms",
          _VMAPPED + "return sum((g.reshape(len(xs), -1) ** 2).sum(dim=1) for g in grads.values())",
          "no-sqrt", "square root"),
    Wrong("each parameter's norm, added", _VMAPPED + "return sum(g.reshape(len(xs), -1).norm(dim=1) for g in "
          "grads.values())", "sum-of-norms", "square everything first"),
    Wrong("one norm per parameter", _VMAPPED + "return {k: g.reshape(len(xs), -1).norm(dim=1) for k, g in "
          "grads.items()}", "dict", "combine every parameter"),
    Wrong("the first parameter only", _VMAPPED + "return next(iter(grads.values())).reshape(len(xs), -1).norm(dim=1)",
          "one-parameter", "every parameter's gradient"),
    Wrong("a loop over the samples", """
        norms = []
        for i in range(len(xs)):
            g = grad(loss_fn)(params, xs[i], ys[i])
            norms.append(sum((t**2).sum() for t in g.values()).sqrt())
        return torch.stack(norms)
    """, "loop", "runs loss_fn once"),
], sneaky=[
    Sneaky("the norms squeezed, a number for a batch of one", _norms(_VMAPPED + _c("""
        squares = sum((g.reshape(len(xs), -1) ** 2).sum(dim=1) for g in grads.values())
        return squares.sqrt().squeeze()
    """)), "test_a_batch_of_one_and_a_batch_of_33"),
])

# -- 14 ---------------------------------------------------------------------------------------------------

_REF_SETUP = _c("""
import numpy as np
from minigrad.reference.engine import Node, Tensor, record
""")


def _sigmoid_op(body: str) -> str:
    return _c("def sigmoid(x):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


EX14A = Exercise("check_sigmoid_op", ("sigmoid",), setup=_REF_SETUP, wrap=_sigmoid_op, right=[
    _sigmoid_op("""
        out = 1 / (1 + np.exp(-x.data))
        return record("SigmoidBackward0", out, (x,), lambda g: (g * out * (1 - out),))
    """),
    _sigmoid_op("""
        out = 0.5 * np.tanh(0.5 * x.data) + 0.5
        return record("SigmoidBackward0", out, (x,), lambda g: (g * (out - out * out),))
    """),
    _sigmoid_op("""
        e = np.exp(-x.data)
        return record("SigmoidBackward0", 1 / (1 + e), (x,), lambda g: (g * e / (1 + e) ** 2,))
    """),
], wrong=[
    Wrong("the local derivative without g", """
        out = 1 / (1 + np.exp(-x.data))
        return record("SigmoidBackward0", out, (x,), lambda g: (out * (1 - out),))
    """, "ignores-g", "the chain rule"),
    Wrong("one gradient, not a tuple of one", """
        out = 1 / (1 + np.exp(-x.data))
        return record("SigmoidBackward0", out, (x,), lambda g: g * out * (1 - out))
    """, "not-a-tuple", "with the comma"),
    Wrong("np.exp of the Tensor, not of x.data", """
        out = 1 / (1 + np.exp(-x))
        return record("SigmoidBackward0", out, (x,), lambda g: (g * out * (1 - out),))
    """, "tensor-not-array", "x.data"),
    Wrong("the exponent without its minus sign", """
        out = 1 / (1 + np.exp(x.data))
        return record("SigmoidBackward0", out, (x,), lambda g: (g * out * (1 - out),))
    """, "forward", "the exponent is -x"),
    Wrong("the derivative of exp, not of sigmoid", """
        out = 1 / (1 + np.exp(-x.data))
        return record("SigmoidBackward0", out, (x,), lambda g: (g * out,))
    """, "derivative", "out * (1 - out)"),
    Wrong("a name of its own", """
        out = 1 / (1 + np.exp(-x.data))
        return record("Sigmoid", out, (x,), lambda g: (g * out * (1 - out),))
    """, "name", "SigmoidBackward0"),
], sneaky=[
    Sneaky("sigmoid as exp(x) / (1 + exp(x)), nan once exp overflows", _sigmoid_op("""
        e = np.exp(x.data)
        out = e / (1 + e)
        return record("SigmoidBackward0", out, (x,), lambda g: (g * out * (1 - out),))
    """), "test_large_inputs_stay_finite"),
    Sneaky("a node made by hand, also for an input that needs no gradient", _sigmoid_op("""
        out = 1 / (1 + np.exp(-x.data))
        return Tensor(out, grad_fn=Node("SigmoidBackward0", (x,), lambda g: (g * out * (1 - out),)))
    """), "test_a_constant_input_records_no_node"),
])


def _topo(body: str) -> str:
    return _c("def topological_order(root):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


_KAHN = """
    from minigrad.reference.engine import count_dependencies

    left = count_dependencies(root)
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                left[child] -= 1
                if left[child] == 0:
                    ready.append(child)
    return order
"""

EX14B = Exercise("check_topological_order", ("topological_order",), setup=_REF_SETUP, wrap=_topo, right=[
    _topo("""
        order, seen = [], {root}
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, children = stack[-1]
            for child, _ in children:
                if child is not None and child not in seen:
                    seen.add(child)
                    stack.append((child, iter(child.next_functions)))
                    break
            else:
                stack.pop()
                order.append(node)
        return order[::-1]
    """),
    _topo(_KAHN),
    _topo("""
        order, seen, stack = [], set(), [(root, False)]
        while stack:
            node, children_done = stack.pop()
            if children_done:
                order.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((child, False) for child, _ in node.next_functions if child is not None)
        return list(reversed(order))
    """),
], wrong=[
    Wrong("depth-first pre-order: a shared node before all its consumers", """
        order, seen, stack = [], set(), [root]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            order.append(node)
            stack.extend(child for child, _ in node.next_functions if child is not None)
        return order
    """, "order", "count the edges into each node"),
    Wrong("the post-order not reversed (leaves first)", """
        order, seen, stack = [], set(), [(root, False)]
        while stack:
            node, children_done = stack.pop()
            if children_done:
                order.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((child, False) for child, _ in node.next_functions if child is not None)
        return order
    """, "reversed", "reversed(order)"),
    Wrong("every path walked, shared nodes kept each time", """
        order, stack = [], [root]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(child for child, _ in node.next_functions if child is not None)
        return order
    """, "duplicates", "add each node once"),
    Wrong("None entries kept", """
        order, seen, stack = [], set(), [root]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            order.append(node)
            if node is not None:
                stack.extend(child for child, _ in node.next_functions)
        return order
    """, "none-node", "skip it"),
    Wrong("names instead of nodes", _KAHN.replace("order.append(node)", "order.append(node.name())"),
          "not-nodes", "the nodes themselves"),
    Wrong("the AccumulateGrad nodes left out", _KAHN.replace("order.append(node)",
          "if node.name() != \"AccumulateGrad\":\n            order.append(node)"), "missing", "AccumulateGrad"),
], sneaky=[
    Sneaky("a recursive depth-first walk, which fails on deep graphs", _topo("""
        order, seen = [], set()

        def visit(node):
            if node is None or node in seen:
                return
            seen.add(node)
            for child, _ in node.next_functions:
                visit(child)
            order.append(node)

        visit(root)
        return order[::-1]
    """), "test_a_chain_of_5000_nodes"),
])

EXERCISES: dict[str, Exercise] = {
    "1": EX1, "2": EX2, "3": EX3, "4": EX4, "5": EX5, "6a": EX6A, "6b": EX6B, "7": EX7, "8": EX8, "9": EX9,
    "10": EX10, "11": EX11, "12": EX12, "13a": EX13A, "13b": EX13B, "13c": EX13C, "14a": EX14A, "14b": EX14B,
}

# What a learner cell has at hand besides its own answer: the lesson's imports.
PRELUDE = """
import minigrad as torch
from minigrad.autograd import Function

F = torch.nn.functional
"""
