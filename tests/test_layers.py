"""minigrad's modules import one another in one direction only (CONTRIBUTING.md: the layers).

The module-level imports, read with `ast` (importing `a.b.c` also runs the packages `a` and `a.b`), form
no cycle, counting a module's imports from its own parent package (`from . import grad` in a module of a
package whose `__init__.py` imports that module is a cycle). An import inside a function is allowed where a
lower layer needs a higher one at call time, and each says why on its line (`# lazy: <reason>`); there are at
most a handful. No function is longer than 60 lines.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "minigrad"
MAX_LAZY = 5  # the limit (#30); 1 today


def _modules() -> dict[str, pathlib.Path]:
    mods = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return mods


MODULES = _modules()


def _absolute(module: str, path: pathlib.Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module: str, path: pathlib.Path, node: ast.AST) -> set[str]:
    """The minigrad modules (and the packages around them) that running the import statement `node` loads."""
    names = []
    if isinstance(node, ast.ImportFrom):
        base = _absolute(module, path, node)
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
    elif isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    out = set()
    for name in names:
        if name in MODULES and name != module:  # what the statement names, a parent package included:
            out.add(name)  # `from . import grad` in autograd/functional.py needs autograd/__init__.py to have run
        name = name.rpartition(".")[0]
        while name.startswith("minigrad"):  # the packages around it, which Python loads first: a module's own
            if name in MODULES and name != module and not module.startswith(name + "."):  # parents are loaded
                out.add(name)  # before it in any case, so only those of other packages count
            name = name.rpartition(".")[0]
    return out


def _imports() -> tuple[dict[str, set[str]], list[tuple[str, int, str]]]:
    """(module -> modules its module-level imports load, [(module, line, source line) of function-level ones])."""
    graph, lazy = {}, []
    for module, path in MODULES.items():
        source = path.read_text()
        tree = ast.parse(source)
        top = set()
        for stmt in tree.body:  # module level, including `if`/`try` blocks at module level
            for node in ast.walk(stmt) if isinstance(stmt, (ast.If, ast.Try)) else (stmt,):
                top.add(id(node))
        graph[module] = set()
        for node in ast.walk(tree):
            targets = _targets(module, path, node) if isinstance(node, (ast.Import, ast.ImportFrom)) else set()
            if not targets:
                continue
            if id(node) in top:
                graph[module] |= targets
            else:
                lazy.append((module, node.lineno, source.splitlines()[node.lineno - 1].strip()))
    return graph, lazy


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a list of modules, or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in graph:
        if start in state:
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_module_level_imports_form_no_cycle():
    graph, _ = _imports()
    assert len(graph) > 30  # the walk found the package
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_checker_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_function_level_imports_are_few_and_each_says_why():
    _, lazy = _imports()
    unexplained = [f"{m}:{line}: {text}" for m, line, text in lazy if "# lazy:" not in text]
    assert not unexplained, unexplained
    assert len(lazy) <= MAX_LAZY, [f"{m}:{line}" for m, line, _ in lazy]


@pytest.mark.parametrize("needle", ["sys.modules", "numpy._core", "numpy.core", "getrefcount", "_ufunc_config"])
def test_nothing_reaches_into_interpreter_or_numpy_internals(needle):
    hits = [f"{p.relative_to(ROOT.parent)}:{i}" for p in MODULES.values()
            for i, line in enumerate(p.read_text().splitlines(), 1) if needle in line]
    assert not hits, hits


def test_the_checker_sees_an_import_from_the_parent_package(tmp_path):
    """`from . import grad` in autograd/functional.py names autograd/__init__.py, which imports functional: a cycle
    (the parent packages Python loads around any import do not count)."""
    module, path = "minigrad.autograd.functional", ROOT / "autograd" / "functional.py"
    node = ast.parse("from . import grad").body[0]
    assert _targets(module, path, node) == {"minigrad.autograd"}
    node = ast.parse("from .graph import Node").body[0]
    assert _targets(module, path, node) == {"minigrad.autograd.graph"}


MAX_LINES = 60


def test_no_function_is_longer_than_sixty_lines():
    """CONTRIBUTING.md: no function in minigrad/ over 60 lines, counted from `def` to its last line (docstring
    included)."""
    long = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{module}.{node.name}: {lines} lines")
    assert not long, long
