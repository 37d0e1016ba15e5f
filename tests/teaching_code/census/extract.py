"""Extract, with `ast`, the PyTorch names public teaching code uses (the census's input, `names.json`).

Run by hand when the sources change (it needs the repositories' snapshots, bare git directories):

    python tests/teaching_code/census/extract.py /work/.mirror > tests/teaching_code/census/names.json

Every `.py` file, every notebook (each code cell parsed alone, IPython magics and shell lines stripped, a
cell that still does not parse skipped) and d2l's Markdown (its PyTorch cells) of each source in `SOURCES`
is read at the snapshot's commit. Names are written as the census counts them:

- `torch.X...`, `nn.X...`, `F.X...` (torch.nn.functional), `optim.X...`, `utils.data.X...`: the attribute
  chains reached from `torch` through any import alias (`import torch.nn as nn`, `from torch import optim`,
  `from torch.utils.data import DataLoader`), read or written, called or not;
- `Tensor.X`: a method call `<expr>.X(...)` whose name is in `dir(torch.Tensor)` and is not a method of
  list, dict or str (on an expression that is not itself a torch module chain).

The output keeps, per source, its repository, commit and each file's path with the sorted names it uses, so
`census.py` reruns offline. `torch` is needed here only for `dir(torch.Tensor)`.
"""

from __future__ import annotations

import ast
import fnmatch
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

# name -> (repository, globs of the files read); a source is one course or one body of teaching code
SOURCES = {
    "pytorch-examples": ("pytorch/examples", ("*.py",)),
    "nn-zero-to-hero": ("karpathy/nn-zero-to-hero", ("*.py", "*.ipynb")),
    "micrograd": ("karpathy/micrograd", ("*.py", "*.ipynb")),
    "makemore": ("karpathy/makemore", ("*.py",)),
    "nanoGPT": ("karpathy/nanoGPT", ("*.py", "*.ipynb")),
    "ng-video-lecture": ("karpathy/ng-video-lecture", ("*.py",)),
    "d2l-en": ("d2l-ai/d2l-en", ("chapter_*.md", "d2l/torch.py")),
    "uvadlc-notebooks": ("phlippe/uvadlc_notebooks", ("docs/tutorial_notebooks/tutorial*/*.ipynb",)),
    "pytorch-deep-learning": ("mrdbourke/pytorch-deep-learning", ("[0-9]*.ipynb", "going_modular/*.py")),
    "annotated-transformer": ("harvardnlp/annotated-transformer", ("*.py",)),
    "labml-annotated": ("labmlai/annotated_deep_learning_paper_implementations", ("labml_nn/*.py",)),
    "nyu-dlsp20": ("Atcold/NYU-DLSP20", ("*.ipynb", "*.py")),
    "llms-from-scratch": ("rasbt/LLMs-from-scratch", ("ch0*.ipynb", "ch0*.py", "appendix-*.ipynb")),
    "yunjey-pytorch-tutorial": ("yunjey/pytorch-tutorial", ("tutorials/*.py",)),
}

MODULES = ("torch.nn", "torch.nn.functional", "torch.optim", "torch.utils.data", "torch.nn.init", "torch.autograd")
SHORT = (("torch.nn.functional.", "F."), ("torch.nn.", "nn."), ("torch.optim.", "optim."),
         ("torch.utils.data.", "utils.data."))
MAGIC = re.compile(r"^\s*[%!]")


def tensor_methods() -> frozenset:
    import torch  # lazy: only the extraction needs torch, for dir(torch.Tensor)

    other = set(dir(list)) | set(dir(dict)) | set(dir(str))
    return frozenset(n for n in dir(torch.Tensor) if not n.startswith("_") and n not in other)


def short(full: str) -> str:
    """`torch.nn.functional.relu` -> `F.relu`, `torch.nn.Linear` -> `nn.Linear`, ... (as the census lists)."""
    for prefix, name in SHORT:
        if full.startswith(prefix):
            return name + full[len(prefix):]
    return full


class Names(ast.NodeVisitor):
    """The names one module (or one notebook, its cells in order) uses."""

    def __init__(self, methods: frozenset, modules: tuple = ("torch",)):
        self.methods = methods
        self.modules = modules  # the packages read as torch (the census's tests: torch and minigrad)
        self.alias: dict[str, str] = {}  # local name -> full torch path ("nn" -> "torch.nn")
        self.found: set[str] = set()

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            full = self.as_torch(a.name)
            if full is not None:
                if a.asname:
                    self.alias[a.asname] = full
                else:
                    self.alias[a.name.split(".")[0]] = "torch"

    def as_torch(self, module: str) -> str | None:
        """`module` as its torch path (`minigrad.nn` -> `torch.nn` when minigrad is read as torch), else None."""
        top, dot, rest = module.partition(".")
        return "torch" + dot + rest if top in self.modules else None

    def visit_Assign(self, node: ast.Assign) -> None:
        """`nn = torch.nn` (as the ports write imports) makes an alias too."""
        full = self.chain(node.value)
        if full is not None and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and full in MODULES:
            self.alias[node.targets[0].id] = full
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = self.as_torch(node.module or "") if node.level == 0 else None
        if mod is not None:
            for a in node.names:
                if a.name != "*":
                    full = f"{mod}.{a.name}"
                    self.alias[a.asname or a.name] = full
                    if full.count(".") > 1 or mod == "torch":
                        self.found.add(short(full))

    def chain(self, node) -> str | None:
        """The full torch path of an attribute chain rooted at a torch alias, else None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.alias:
            return ".".join([self.alias[node.id], *reversed(parts)])
        return None

    def visit_Attribute(self, node: ast.Attribute) -> None:
        full = self.chain(node)
        if full is not None:
            if full.count(".") >= 1 and full not in ("torch.nn", "torch.optim", "torch.nn.functional",
                                                     "torch.utils", "torch.utils.data"):
                self.found.add(short(full))
            return  # the longest chain only
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        full = self.alias.get(node.id)
        if full is not None and full.count(".") >= 1 and isinstance(node.ctx, ast.Load):
            if full not in ("torch.nn", "torch.optim", "torch.nn.functional", "torch.utils", "torch.utils.data"):
                self.found.add(short(full))

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in self.methods and self.chain(f.value) is None \
                and self.chain(f) is None:
            self.found.add("Tensor." + f.attr)
        self.generic_visit(node)


def cells(path: str, text: str) -> list[str]:
    """The code of a file as the pieces to parse: the whole module, a notebook's code cells, d2l's PyTorch
    cells (a `%%tab` line naming pytorch or all)."""
    if path.endswith(".ipynb"):
        try:
            nb = json.loads(text)
        except ValueError:
            return []
        out = []
        for c in nb.get("cells", []):
            if c.get("cell_type") == "code":
                src = c.get("source", "")
                out.append("".join(src) if isinstance(src, list) else src)
        return [strip_magics(s) for s in out]
    if path.endswith(".md"):
        out = []
        for block in re.findall(r"```\{\.python \.input[^}]*\}\n(.*?)```", text, re.S):
            first = block.split("\n", 1)[0]
            if first.startswith("%%tab") and not ("pytorch" in first or "all" in first):
                continue
            out.append(strip_magics(block))
        return out
    return [text]


def strip_magics(src: str) -> str:
    return "\n".join("" if MAGIC.match(line) else line for line in src.split("\n"))


def names_of(path: str, text: str, methods: frozenset) -> list[str]:
    v = Names(methods)
    for code in cells(path, text):
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        v.visit(tree)
    return sorted(n for n in v.found if in_torch(n))


def in_torch(name: str) -> bool:
    """Whether `name` is one of PyTorch 2.13's (drops a chain that reads past a name into an object's own
    attributes, `nn.Module.__init__`, and names of other versions)."""
    import torch  # lazy: only the extraction needs torch

    root, _, rest = name.partition(".")
    where = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "optim": torch.optim,
             "Tensor": torch.Tensor}.get(root)
    if name.startswith("utils.data."):
        where, rest = torch.utils.data, name[len("utils.data."):]
    parent = where
    for part in rest.split("."):
        try:
            parent, where = where, getattr(where, part)
        except Exception:  # noqa: BLE001 - any failure means: not a torch name
            return False
    # not a module itself (`torch.nn`), nor read past a value into its own attributes (`torch.__version__.split`)
    return not inspect.ismodule(where) and (inspect.ismodule(parent) or inspect.isclass(parent))


def git(gitdir: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def extract(mirrors: Path) -> dict:
    methods = tensor_methods()
    out = {}
    for name, (repo, globs) in SOURCES.items():
        gitdir = mirrors / repo.replace("/", "+") / "repo"
        commit = git(gitdir, "rev-parse", "HEAD").strip()
        files, absent = {}, []
        for path in git(gitdir, "ls-tree", "-r", "--name-only", commit).split("\n"):
            if path and any(fnmatch.fnmatch(path, g) for g in globs):
                try:
                    text = git(gitdir, "show", f"{commit}:{path}")
                except subprocess.CalledProcessError:  # a snapshot may leave out its largest files
                    absent.append(path)
                    continue
                found = names_of(path, text, methods)
                if found:
                    files[path] = found
        out[name] = {"repository": repo, "commit": commit, "absent": absent, "files": files}
    return out


def dump(data: dict) -> str:
    """JSON with one line per file, so a change to the lists reads as a short diff."""
    lines = ["{"]
    for i, (name, s) in enumerate(data.items()):
        lines.append(f'  {json.dumps(name)}: {{"repository": {json.dumps(s["repository"])}, '
                     f'"commit": {json.dumps(s["commit"])}, "absent": {json.dumps(s["absent"])}, "files": {{')
        items = list(s["files"].items())
        for j, (path, names) in enumerate(items):
            lines.append(f"    {json.dumps(path)}: {json.dumps(names)}" + ("," if j < len(items) - 1 else ""))
        lines.append("  }}" + ("," if i < len(data) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(dump(extract(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror"))))
