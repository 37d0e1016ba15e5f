"""The census of what public teaching code calls (`make census`): writes tests/teaching_code/CENSUS.md and
prints the coverage figure. Offline: it reads the committed name lists (`names.json`, made by `extract.py`).

For each name: how many sources use it, whether minigrad has it, lacks it, or leaves it out of scope (and
why), and the differential test that exercises it. A test exercises a name when the name appears in a test
file that runs against PyTorch (read with the same `ast` extraction, `torch`, `minigrad`, `lib` and `mg` as
the library roots), or, for an op in the registry with samples, the registry sweeps.

Coverage = the uses (a name counted once per source using it) whose name links a test, over all uses:
out-of-scope names stay in the denominator.
"""

from __future__ import annotations

import ast
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from extract import Names  # noqa: E402

import minigrad  # noqa: E402
from minigrad.ops.registry import REGISTRY  # noqa: E402

CENSUS_MD = ROOT / "tests" / "teaching_code" / "CENSUS.md"
SWEEPS = "tests/ops/test_registry_sweeps.py"
TEST_ROOTS = ("torch", "minigrad", "lib", "mg")

# name prefixes that cannot apply to a CPU NumPy library, and why (the list)
OUT_OF_SCOPE = (
    ("torch.cuda.", "CUDA: minigrad runs on the CPU (the questions get a CPU-only PyTorch's answers)"),
    ("torch.version.cuda", "CUDA"),
    ("torch.backends.", "GPU backends (cudnn, mps): a CPU-only PyTorch's answers"),
    ("torch.accelerator.", "accelerators: a CPU-only PyTorch's answers"),
    ("torch.distributed", "distributed training"), ("nn.parallel.", "distributed / multi-GPU"),
    ("nn.DataParallel", "multi-GPU"), ("utils.data.distributed.", "distributed training"),
    ("torch.multiprocessing", "multi-process training"),
    ("torch.amp.", "mixed precision (AMP) on the GPU"), ("torch.autocast", "mixed precision (AMP)"),
    ("torch.compile", "compilation: the model itself runs as written"), ("torch.jit.", "TorchScript compilation"),
    ("torch._dynamo", "compilation"), ("torch.export", "compilation"), ("torch.onnx", "model export"),
    ("torch.quantization", "quantization"), ("torch.ao.", "quantization"),
    ("torch.bfloat16", "bfloat16 (a GPU/AMP dtype)"), ("Tensor.bfloat16", "bfloat16 (a GPU/AMP dtype)"),
    ("Tensor.pin_memory", "CUDA"), ("Tensor.record_stream", "CUDA streams"),
    ("torch.profiler", "profiling the C++ kernels"), ("torch.autograd.profiler", "profiling the C++ kernels"),
    ("torch.ops.profiler", "profiling the C++ kernels"), ("torch._amp_", "mixed precision (AMP) on the GPU"),
    ("torch.fx", "graph capture for compilers (torch.fx)"), ("torch.classes", "C++ extensions"),
    ("torch.futures", "asynchronous (RPC) execution"), ("torch.mps", "Apple GPUs"), ("torch.hub", "downloads"),
    ("torch.func", "in progress elsewhere (issues #26/#27)"),
    ("torch.autograd.forward_ad", "in progress elsewhere (issues #26/#27)"),
)


def uses(data: dict) -> Counter:
    """name -> how many sources use it."""
    count: Counter = Counter()
    for src in data.values():
        count.update({n for names in src["files"].values() for n in names})
    return count


def resolve(name: str):
    """minigrad's object for a census name, or raise AttributeError."""
    root, _, rest = name.partition(".")
    where = {"torch": minigrad, "nn": minigrad.nn, "F": minigrad.nn.functional, "optim": minigrad.optim,
             "Tensor": minigrad.Tensor}.get(root)
    if name.startswith("utils.data."):
        where, rest = minigrad.utils.data, name[len("utils.data."):]
    for part in rest.split("."):
        where = getattr(where, part)
    return where


def status(name: str) -> tuple[str, str]:
    """('has' | 'lacks' | 'out of scope', why)."""
    try:
        resolve(name)
        found = True
    except Exception:  # noqa: BLE001 - any failure: minigrad does not have it
        found = False
    scope = next((why for prefix, why in OUT_OF_SCOPE if name.startswith(prefix)), None)
    if scope is not None:
        return ("out of scope, has its CPU answer" if found else "out of scope"), scope
    return ("has", "") if found else ("lacks", "")


def _test_files() -> list[Path]:
    """The test code, differential files (which run PyTorch) first: test modules, the fuzzer's package."""
    files = sorted(p for p in (ROOT / "tests").rglob("*.py") if "census" not in p.relative_to(ROOT).parts
                   and p.name != "test_census.py"
                   and (p.name.startswith("test_") or "parityfuzz" in p.parts))
    return sorted(files, key=lambda p: ("torch" not in p.read_text(), "parityfuzz" in p.parts))  # tests first


def _named_in_strings(tree: ast.AST, count: Counter) -> set[str]:
    """Census names a test names in a string (`getattr(lib.optim, name)` over parametrized names): a census
    name itself, or a string of identifiers `X` (or `X, Y`), each of which counts as `nn.X`, `optim.X`, `F.X`
    or `torch.X` when that is a census name."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 400:
            if node.value in count:  # a census name itself ("torch.cuda.empty_cache")
                out.add(node.value)
            words = [w.strip() for w in node.value.split(",")]
            if not all(w.isidentifier() for w in words):
                continue  # prose or code in a string: its words are not names ("range" in a sentence)
            for word in words:
                out.update(n for n in (f"nn.{word}", f"optim.{word}", f"F.{word}", f"torch.{word}",
                                       f"optim.lr_scheduler.{word}", f"nn.init.{word}") if n in count)
    return out


def test_names(count: Counter) -> dict[str, str]:
    """name -> the first test file using it (differential files first; the registry sweeps for a swept op)."""
    methods = frozenset(n.split(".", 1)[1] for n in count if n.startswith("Tensor."))
    found: dict[str, str] = {}
    for path in _test_files():
        tree = ast.parse(path.read_text())
        v = Names(methods, ("torch", "minigrad"))
        v.alias.update({r: "torch" for r in TEST_ROOTS})
        v.visit(tree)
        rel = path.relative_to(ROOT).as_posix()
        for n in sorted(v.found | _named_in_strings(tree, count)):
            found.setdefault(n, rel)
    for key, op in REGISTRY.items():
        if op.public and op.samples:
            name = "F." + key.split(".")[-1] if key.startswith("nn.functional.") else f"torch.{key}"
            for alias in (name, *(name.rsplit(".", 1)[0] + "." + a for a in op.aliases)):
                found[alias] = SWEEPS
                if op.method or op.namespace == "Tensor":
                    found["Tensor." + alias.rsplit(".", 1)[1]] = SWEEPS
    return found


def table(data: dict) -> tuple[list[tuple], float]:
    count = uses(data)
    tests = test_names(count)
    rows, covered, total = [], 0, 0
    for name, n in sorted(count.items(), key=lambda kv: (-kv[1], kv[0])):
        st, why = status(name)
        test = tests.get(name, "") if st != "lacks" else ""  # a test that only names what minigrad lacks covers nothing
        rows.append((name, n, st, why, test))
        total += n
        covered += n if test else 0
    return rows, 100.0 * covered / total


def markdown(data: dict, rows: list[tuple], coverage: float) -> str:
    lines = ["# Census of what public teaching code calls", "",
             "Written by `make census` (tests/teaching_code/census/census.py) from the name lists in",
             "`census/names.json` (extracted with `ast` by `census/extract.py` from the sources below). A name counts",
             "once per source using it; *Test* is a differential test (minigrad against PyTorch 2.13) that uses",
             "it. Coverage: the uses whose name has a test, over all uses (out-of-scope names included).", "",
             f"**Coverage: {coverage:.1f}%** of {sum(r[1] for r in rows)} uses of {len(rows)} names.", "",
             "| Source | Repository | Commit | Files read |", "| --- | --- | --- | --- |"]
    for name, src in data.items():
        absent = f" ({len(src['absent'])} absent from the snapshot)" if src["absent"] else ""
        lines.append(f"| {name} | {src['repository']} | `{src['commit'][:12]}` | {len(src['files'])}{absent} |")
    lines += ["", "| Name | Sources | minigrad | Why | Test |", "| --- | --- | --- | --- | --- |"]
    for name, n, st, why, test in rows:
        link = f"[{Path(test).name}](../../{test})" if test else ""
        lines.append(f"| `{name}` | {n} | {st} | {why} | {link} |")
    return "\n".join(lines) + "\n"


def main() -> float:
    data = json.loads((HERE / "names.json").read_text())
    rows, coverage = table(data)
    CENSUS_MD.write_text(markdown(data, rows, coverage))
    lacking = [r for r in rows if r[2] == "lacks" and r[1] >= 2]
    print(f"census: {len(rows)} names, {sum(r[1] for r in rows)} uses in {len(data)} sources; "
          f"coverage {coverage:.1f}%; names used by 2+ sources that minigrad lacks: {len(lacking)}")
    return coverage


if __name__ == "__main__":
    main()
