"""The differential fuzzer in CI: its fixed-seed run against the known-failures list, its self-test, its
coverage, and the pieces it is made of (comparer, shrinker, exclusions, corpus, catalogue).

Long runs: ``make fuzz N=10000 SEED=0``. After fixing a bug: ``make fuzz-known`` and review the diff of
``tests/fuzz/parityfuzz/known_failures.md``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from parityfuzz import bullets, catalogue, compare, corpus, exclusions, fuzz, known, runner, shrink
from parityfuzz.broken import broken_library
from parityfuzz.observe import TensorObs
from parityfuzz.program import PREAMBLE, array_literal, program_from_text

DIFFERENCES = Path(__file__).resolve().parents[2] / "docs" / "differences.md"  # the README's guide page
FIXED_FAILURES = Path(known.__file__).with_name("fixed_failures.md")  # the corpus mismatches before their fixes


# -- the CI run ---------------------------------------------------------------------------------------


def test_ci_set_matches_the_known_failures(torch):
    """The corpus and programs 0..CI_N-1 of CI_SEED disagree exactly where known_failures.md says.

    It runs in a fresh interpreter: warnings given once per process and other process-wide state
    left by earlier tests must not change what the programs see.
    """
    path = os.pathsep.join(p for p in (str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.run([sys.executable, "-m", "parityfuzz", "known", "--check"], capture_output=True, text=True,
                          env=env, cwd=Path(__file__).parent, timeout=900)
    assert proc.returncode == 0, "\n" + proc.stdout + proc.stderr


def test_forward_ci_set_matches_its_known_failures(torch):
    """Forward mode's CI set (programs 0..FORWARD_CI_N-1 of FORWARD_CI_SEED under a dual level) disagrees exactly
    where known_failures_forward.md says; in a fresh interpreter, as the normal set."""
    _check_mode_ci_set("forward")


def test_transform_ci_set_matches_its_known_failures(torch):
    """The function transforms' CI set (programs 0..TRANSFORM_CI_N-1 of TRANSFORM_CI_SEED: jvp, vjp, jacfwd, jacrev,
    vmap of random functions against torch.func) disagrees exactly where known_failures_transform.md says, in every
    category but known.TRANSFORM_UNCOMPARED (errors and warnings); in a fresh interpreter, as the normal set."""
    _check_mode_ci_set("transform")
    assert not [e.id for e in known.read(known.TRANSFORM_PATH).values() if e.category in known.TRANSFORM_UNCOMPARED]


def _check_mode_ci_set(mode: str) -> None:
    path = os.pathsep.join(p for p in (str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.run([sys.executable, "-m", "parityfuzz", "known", "--check", "--mode", mode],
                          capture_output=True, text=True, env=env, cwd=Path(__file__).parent, timeout=900)
    assert proc.returncode == 0, "\n" + proc.stdout + proc.stderr
    entries = known.read(known.path_of(mode))
    assert f"\n{len(entries)} entries.\n" in known.path_of(mode).read_text(encoding="utf-8")
    assert all(e.category in compare.CATEGORIES and e.bullet in bullets.BULLETS for e in entries.values())
    assert not [e.id for e in entries.values() if e.bullet == "unclassified"]


def test_known_failures_are_filed_under_issue_bullets():
    assert known.PATH.exists(), "known_failures.md is missing"
    entries = known.read()  # (the list may be empty: every mismatch of the CI set fixed)
    assert f"\n{len(entries)} entries.\n" in known.PATH.read_text(encoding="utf-8"), "an entry was not read back"
    assert all(e.category in compare.CATEGORIES for e in entries.values())
    assert not [e.id for e in entries.values() if e.bullet not in bullets.BULLETS or e.bullet == "unclassified"]
    corpus_entries = [e for e in entries.values() if e.id.startswith("corpus ")]
    for e in corpus_entries:  # a corpus case is filed under the bullet it was written for
        assert e.bullet == corpus.bullet_of(e.id), e.id


# -- the self-test: the fuzzer can fail, and says why -------------------------------------------------


SELF_TEST = {
    "gradient": """
x = torch.tensor([-1., 0., 2.], requires_grad=True)
torch.relu(x).sum().backward()
""",
    "gradient (dropped accumulation)": """
x = torch.tensor([1., 2.], requires_grad=True)
l = (x * 2).sum()
l.backward(retain_graph=True)
l.backward()
""",
    "None-vs-zeros": """
x = torch.tensor([1., 2.], requires_grad=True)
y = torch.tensor([1., 2.], requires_grad=True)
g = torch.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)
""",
}


@pytest.mark.parametrize("expected", list(SELF_TEST))
def test_broken_torch_is_caught_and_categorised(torch, expected):
    ref, broken = runner.torch_library(torch), broken_library(torch)
    found = compare.check(program_from_text(expected, SELF_TEST[expected]), ref, broken)
    assert found is not None and found.category == expected.split(" ")[0], found


def test_random_programs_catch_the_broken_torch_and_nothing_else(torch):
    """Against a broken torch the random programs find the faults (and only gradient-level differences);
    against torch itself they find nothing: the fuzzer's own machinery adds no noise."""
    ref, broken = runner.torch_library(torch), broken_library(torch)
    progs = fuzz.programs(3, 300)
    against_broken = fuzz.run_batch(progs, ref, broken).counts()
    assert against_broken["gradient"] > 0 and against_broken["None-vs-zeros"] > 0, against_broken
    assert set(against_broken) <= {"gradient", "None-vs-zeros", "flags"}, against_broken
    assert torch.relu.__name__ == "relu" and torch.autograd.grad.__module__ == "torch.autograd"  # restored
    assert fuzz.run_batch(progs, ref, runner.torch_library(torch)).mismatches == []


def test_shrinker_keeps_the_category_and_drops_what_is_not_needed(torch):
    ref, broken = runner.torch_library(torch), broken_library(torch)
    program = program_from_text("noisy", """
a = torch.tensor([3., 4.], requires_grad=True)
b = a.exp() * 2
x = torch.tensor([-1., 0., 2.], requires_grad=True)
c = b.sum() + 1
y = torch.relu(x)
d = torch.cat([b, b])
l = y.sum()
l.backward()
""")
    found = compare.check(program, ref, broken)
    assert found is not None and found.category == "gradient"
    small = shrink.shrink(found, ref, broken)
    assert small.category == "gradient"
    lines = small.program.lines()
    assert len(lines) < len(program.lines())
    assert any("relu" in line for line in lines) and not any("cat" in line or "exp" in line for line in lines)


# -- coverage -------------------------------------------------------------------------------------------


def test_every_op_and_feature_is_drawn_often_enough():
    """Every op the catalogue draws (every registered op among them, see the next assertion) and every feature."""
    counts, n = fuzz.coverage(fuzz.programs(0, 10_000))
    rare = [(key, per10k) for key, _, per10k, ok in fuzz.coverage_rows(counts, n) if not ok]
    assert not rare, f"drawn fewer than {fuzz.MIN_PER_10K} times per 10,000 programs: {rare}"
    from minigrad.ops import REGISTRY

    differentiable = [key for key, op in REGISTRY.items() if op.public and op.differentiable]
    differentiable += [f"{key}_" for key, op in REGISTRY.items() if op.public and op.differentiable and op.inplace]
    drawn = {op.name for op in catalogue.OPS}
    assert len(differentiable) > 100
    assert not [k for k in differentiable if k not in drawn and k not in exclusions.NOT_DRAWN], "registered, not drawn"
    derived = {op.name for op in catalogue.OPS if op.name not in catalogue.DRAWERS}
    assert derived and all(counts[f"op:{name}"] for name in derived)


def test_a_newly_declared_op_is_drawn_from_its_samples():
    """An op declared with samples and no hand-written draw is fuzzed as declared: no edit in the catalogue."""
    import random

    from parityfuzz.generator import Builder

    from minigrad.ops.registry import Sample, declare

    op = declare("fuzz_probe", lambda self, k: self * k, samples=(Sample((((2, 3), "real"),), (2.0,)),), register=False)
    entry = catalogue.derived.entry_for("fuzz_probe", {"fuzz_probe": op})
    assert entry is not None and entry.name == "fuzz_probe" and not entry.inplace
    b = Builder(random.Random(0), "probe")
    catalogue.apply(b, entry)
    line = b.stmts[-1].code
    assert "fuzz_probe(" in line and "2.0" in line and b.pool[-1].shape == (2, 3), line


def test_a_new_derived_op_leaves_the_other_programs_unchanged():
    """Registering an op adds a derived entry; the programs of a seed that do not draw it stay exactly as they were
    (catalogue.step: derived ops are chosen by consistent hashing and draw from streams of their own), so the
    fixed-seed CI set does not change with every new op."""
    from parityfuzz.generator import generate

    from minigrad.ops.registry import Sample, declare

    op = declare("fuzz_probe", lambda self, k: self * k, samples=(Sample((((2, 3), "real"),), (2.0,)),), register=False)
    fake = catalogue.derived.entry_for("fuzz_probe", {"fuzz_probe": op})
    before = [generate(14, i) for i in range(150)]
    after = [generate(14, i, ops=[*catalogue.OPS, fake]) for i in range(150)]
    drew = [i for i, p in enumerate(after) if "op:fuzz_probe" in p.tags()]
    changed = [i for i, (p, q) in enumerate(zip(before, after)) if p.source() != q.source()]
    assert fake in catalogue.lists([*catalogue.OPS, fake])["op"][2]  # (drawn as a derived op: in about 1 derived
    assert set(changed) == set(drew), (drew, changed)  # step in 125, so in a program or a few of these)
    assert len(changed) < 15


def test_every_op_name_has_a_draw_function():
    """The op list comes from op_names() (the contract's names and the registry's): each needs a draw function
    (hand-written, or derived from the op's samples), and every hand-written draw function belongs to a listed name."""
    names = catalogue.op_names()
    entries, missing = catalogue.build(names)
    assert not missing, f"op names without a draw function in catalogue.py: {missing}"
    assert len(names) == len(set(names)) == len(entries)
    assert not set(catalogue.DRAWERS) - set(names), "draw functions for names that are not drawn"
    assert catalogue.build(["exp", "no_such_op"]) == ([catalogue.DRAWERS["exp"]], ["no_such_op"])


def test_op_names_exist_in_both_libraries(torch):
    """Every drawn name is a torch/Tensor/nn.functional name in both libraries (a missing contract name in
    minigrad would show as a crash, which docs/differences.md's "Missing names" excludes only outside the contract)."""
    import minigrad

    for lib in (torch, minigrad):
        for name in catalogue.op_names():
            owners = [lib.nn.functional] if name.startswith("nn.functional.") else [lib, lib.Tensor]
            short = name.removeprefix("nn.functional.")
            assert any(hasattr(owner, short) for owner in owners), (lib.__name__, name)


def test_generation_is_deterministic():
    assert fuzz.programs(5, 20, start=100) == fuzz.programs(5, 20, start=100)
    assert fuzz.programs(5, 3) != fuzz.programs(6, 3)


# -- exclusions: exactly docs/differences.md, "Differences from PyTorch" ---------------------------------------


def _differences_section() -> str:
    """The list of docs/differences.md (its bullets, up to the page's first subheading if any)."""
    text = DIFFERENCES.read_text(encoding="utf-8")
    return text.split("# Differences from PyTorch", 1)[1].split("\n## ", 1)[0]


def test_exclusions_are_exactly_the_readme_differences():
    section = _differences_section()
    headings = re.findall(r"^- \*\*(.+?)\*\*", section, re.M)
    assert [e.heading for e in exclusions.EXCLUSIONS] == headings
    flat = " ".join(section.split())
    for e in exclusions.EXCLUSIONS:
        assert " ".join(e.quote.split()) in flat, f"docs/differences.md no longer says: {e.quote!r}"
    assert set(exclusions.NOT_DRAWN.values()) <= set(headings)
    drawn = {op.name for op in catalogue.OPS}
    assert not drawn & set(exclusions.NOT_DRAWN)


def test_view_and_error_exclusions_are_narrow():
    assert exclusions.node_names_match("AsStridedBackward0", "SelectBackward0")
    assert not exclusions.node_names_match("AsStridedBackward0", "MulBackward0")
    assert not exclusions.node_names_match("SliceBackward0", "AliasBackward0")
    base = "one of the variables needed for gradient computation has been modified by an inplace operation: "
    assert exclusions.error_texts_match(base + "[x], which is output 0 of AsStrided, is at version 2",
                                        base + "[x], which is output 0 of Select, is at version 2")
    assert not exclusions.error_texts_match(base + "[x], which is output 0 of AsStrided, is at version 2",
                                            base + "[x], which is output 0 of Select, is at version 1")
    assert not exclusions.error_texts_match(base + "[x], which is output 0 of Pow1, is at version 1",
                                            base + "[x], which is output 0 of Pow, is at version 1")


def test_warn_once_list_is_pytorchs():
    """Each WARN_ONCE warning is given once per process by PyTorch (so the runner may keep only the first)."""
    script = textwrap.dedent("""
        import warnings, torch
        cases = [lambda: torch.ones(3).T, lambda: torch.tensor(1.).T, lambda: torch.tensor(1.).mT,
                 lambda: torch.tensor(1.).mH,
                 lambda: (lambda a: (a * a).sum().backward(create_graph=True))(torch.ones(1, requires_grad=True)),
                 lambda: float(torch.ones(1, requires_grad=True))]
        for case in cases:
            counts = []
            for _ in range(2):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    case()
                counts.append([str(w.message) for w in caught])
            print(len(counts[0]), len(counts[1]), repr(counts[0][0]))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    rows = [line.split(" ", 2) for line in out.strip().splitlines()]
    assert [(a, b) for a, b, _ in rows] == [("1", "0")] * len(runner.WARN_ONCE)
    for (_, _, message), prefix in zip(rows, runner.WARN_ONCE):
        assert eval(message).startswith(prefix.split(": ", 1)[1])


# -- the comparer --------------------------------------------------------------------------------------


def _t(values, dtype="float64", **kw):
    arr = np.array(values, dtype=dtype)
    fields = dict(dtype=dtype, shape=arr.shape, values=arr, requires_grad=False, is_leaf=True, retains_grad=False,
                  version=0, node=None)
    fields.update(kw)
    return TensorObs(**fields)


@pytest.mark.parametrize("a, b, category", [
    (_t([0.0, 1.0]), _t([np.nan, 1.0]), "value"),
    (_t([np.inf]), _t([-np.inf]), "value"),
    (_t([-0.0]), _t([0.0]), "value"),
    (_t([1.0]), _t([1.0 + 1e-8]), "value"),
    (_t([1.0], "float32"), _t([1.0], "float64"), "shape"),
    (_t([1.0]), _t([1.0], requires_grad=True), "flags"),
    (_t([1.0], version=1), _t([1.0]), "flags"),
    (_t([1.0], node="MulBackward0"), _t([1.0], node="MulBackward1"), "node name"),
    (_t([1.0], grad=None), _t([1.0], grad=_t([0.0])), "None-vs-zeros"),
    (_t([1.0], grad=None), _t([1.0], grad=_t([2.0])), "gradient"),
    (_t([1.0], grad=_t([1.0])), _t([1.0], grad=_t([2.0])), "gradient"),
])
def test_comparer_categorises_differences(a, b, category):
    found = compare.diff_obs(a, b, "v", grad_ctx=False, check_node=True)
    assert found and found[0][0] == category, found


@pytest.mark.parametrize("a, b", [
    (_t([0.0, np.nan, np.inf, -0.0]), _t([0.0, np.nan, np.inf, -0.0])),
    (_t([1.0]), _t([1.0 + 1e-12])),
    (_t([1.0], "float32"), _t([1.0 + 1e-6], "float32")),
    (_t([1.0], node="AsStridedBackward0"), _t([1.0], node="SelectBackward0")),
])
def test_comparer_accepts_agreement(a, b):
    assert compare.diff_obs(a, b, "v", grad_ctx=False, check_node=True) == []


def test_float32_rounding_carried_into_float64_is_compared_as_float32():
    a, b = _t([0.98367500305]), _t([0.98367494345])
    assert compare.diff_obs(a, b, "v", grad_ctx=False, check_node=True)
    assert not compare.diff_obs(a, b, "v", grad_ctx=False, check_node=True, low=True)


@pytest.mark.parametrize("ref, got, category", [
    (None, ("ValueError", "x"), "crash"),
    (("RuntimeError", "a"), None, "missing error"),
    (("RuntimeError", "a"), ("ValueError", "a"), "error type"),
    (("RuntimeError", "a"), ("RuntimeError", "b"), "error text"),
])
def test_exceptions_are_compared_by_type_and_first_line(ref, got, category):
    assert compare._diff_exception(ref, got)[0][0] == category
    assert compare._diff_exception(ref, ref) == []


def test_messages_are_normalised_as_the_readme_says():
    from parityfuzz.observe import first_line, normalise

    assert normalise("expected torch.Size([2]) (Triggered internally at /a/b.cpp:12.)", "torch") == \
        "expected minigrad.Size([2])"
    assert normalise("see https://pytorch.org/docs/autograd.html#torch.autograd.Function", "torch").endswith(
        "#torch.autograd.Function")
    assert normalise("torch::autograd::CopySlices at 0x7f00ab", "torch") == "minigrad::autograd::CopySlices at 0x?"
    assert first_line("the message\nhint: do this") == "the message"


def test_runner_records_first_lines_and_warnings(libraries):
    ref, _ = libraries
    steps = list(runner.run(program_from_text("r", "x = torch.ones(2).view(3)\ny = torch.tensor([1.]).std()"), ref))
    assert steps[0].exc == ("RuntimeError", "shape '[3]' is invalid for input of size 2")
    assert steps[1].exc is None and steps[1].warnings[0].startswith("UserWarning: std(): degrees of freedom is <= 0")
    assert steps[-1].graph is not None and steps[-1].index == -1


# -- programs and snippets -----------------------------------------------------------------------------


@pytest.mark.parametrize("arr", [
    np.array([-0.1, 1e30, -0.0, np.nan, -np.inf], dtype="float32"),
    np.array(1.5), np.zeros((2, 0), dtype="int64"), np.array([[True], [False]]), np.array([255], dtype="uint8"),
])
def test_array_literals_rebuild_the_array_exactly(arr):
    back = eval(array_literal(arr), {"np": np, "inf": np.inf, "nan": np.nan})
    assert back.dtype == arr.dtype and back.shape == arr.shape
    assert np.array_equal(back, arr, equal_nan=arr.dtype.kind == "f")
    if arr.dtype.kind == "f":
        assert np.array_equal(np.signbit(back), np.signbit(arr))


def test_snippets_run_as_standalone_scripts(tmp_path, torch):
    """A report's snippet, behind `import minigrad as torch` (or torch) and the preamble, is a runnable script (a
    generated program's snippet read back as a report's is: known_failures.md may hold none)."""
    program = program_from_text("generated", fuzz.programs(known.CI_SEED, 1)[0].snippet())
    for library in ("torch", "minigrad"):
        script = tmp_path / f"{library}.py"
        script.write_text(program.source(library), encoding="utf-8")
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
        assert "NameError" not in proc.stderr and "SyntaxError" not in proc.stderr, proc.stderr
    assert PREAMBLE.startswith("import numpy as np")


def test_corpus_holds_an_example_of_every_issue_bullet():
    issue_bullets = {k for k, (section, _) in bullets.BULLETS.items()
                     if not section.startswith(("Not in issue 14", "Unclassified"))}
    assert {bullet for bullet, _ in corpus.CASES.values()} == issue_bullets


def test_classifier_files_issue_examples_under_their_bullets(libraries):
    """For the corpus cases that disagree today, and for what each corpus case showed before it was fixed
    (fixed_failures.md), the classifier agrees with the bullet the case was written for in most cases (it only
    suggests; the stored bullet is what counts)."""
    ref, lib = libraries
    found = [(e.id, e.category, e.detail, e.snippet) for e in known.read(FIXED_FAILURES).values()]
    for p in corpus.programs():
        m = compare.check(p, ref, lib)
        if m is not None:
            found.append((p.name, m.category, m.detail, m.program.snippet()))
    agree = sum(bullets.classify(category, detail, snippet) == corpus.bullet_of(name)
                for name, category, detail, snippet in found)
    assert found and agree / len(found) > 0.6, (agree, len(found))


def test_fixed_failures_are_corpus_cases():
    entries = known.read(FIXED_FAILURES)
    assert entries and all(corpus.bullet_of(name) for name in entries)


# -- forward-mode and transform programs (issues 26 and 27) ------------------------------------------------------


def test_forward_and_transform_programs_find_nothing_against_torch_itself(torch):
    """The forward-mode and transform programs run and compare without noise: against PyTorch itself, nothing
    differs; they use dual tensors, tangents and every transform; a program stopped early leaves no dual level."""
    from parityfuzz import modes

    ref = runner.torch_library(torch)
    modes.warm_up(torch)
    progs = fuzz.programs(7, 40, mode="forward") + fuzz.programs(7, 60, mode="transform")
    assert fuzz.run_batch(progs, ref, runner.torch_library(torch)).mismatches == []
    tags = set().union(*(p.tags() for p in progs))
    assert {"fw:make_dual", "fw:unpack_dual", "fw:in-place", "tr:in_dims None"} <= tags
    assert {f"tr:{kind}" for kind in ("jvp", "vjp", "jacfwd", "jacrev", "vmap")} <= tags
    stopped = program_from_text("stopped", "fw = torch.autograd.forward_ad\nlevel = fw.enter_dual_level()\n"
                                           "x = torch.ones(2).view(3)")
    list(runner.run(stopped, ref))
    assert torch.autograd.forward_ad._current_level == -1


def test_forward_programs_compare_tangents(torch):
    """A wrong tangent is caught: a torch whose unpack_dual doubles tangents disagrees on some forward program."""
    import contextlib

    from parityfuzz import modes

    @contextlib.contextmanager
    def doubled():
        fw = torch.autograd.forward_ad
        real = fw.unpack_dual

        def unpack(t, *a, **k):
            p, tan = real(t, *a, **k)
            return fw.UnpackedDualTensor(p, None if tan is None else tan * 2)

        fw.unpack_dual = unpack
        try:
            yield
        finally:
            fw.unpack_dual = real

    modes.warm_up(torch)
    broken = runner.Library("broken", torch, "torch", doubled, first_once_only=True)
    found = fuzz.run_batch(fuzz.programs(7, 30, mode="forward"), runner.torch_library(torch), broken)
    categories = {m.category for m in found.mismatches}  # (a doubled tangent that requires grad: a new node too)
    assert "gradient" in categories and categories <= {"gradient", "second-order node name", "second-order graph"}


def test_gaps_are_counted_apart():
    from parityfuzz.modes import gap_of

    assert gap_of("crash", "minigrad raised NotImplementedError: Trying to use forward AD with cumprod that does "
                           "not support it") == "forward gap"
    assert gap_of("missing error", "torch raised NotImplementedError: Trying to use forward AD with x") is None
    slow = "UserWarning: There is a performance drop because we have not yet implemented the batching rule for aten::x"
    assert gap_of("warning", f"warnings: torch [], minigrad ['{slow}']") == "batching gap"
    assert gap_of("warning", f"warnings: torch ['{slow}'], minigrad ['{slow}', 'x']") is None


def test_forward_programs_compare_a_tangents_values_and_flags_not_its_graph(libraries, torch):
    """docs/differences.md's "A tangent's own graph": var's tangent is PyTorch's SumBackward1 (its C++ formula),
    minigrad's SumBackward0 (the backward rule's): found, but not counted, in a forward
    program (a snippet read back too); a tangent's values, gradients and flags still count."""
    from parityfuzz import modes

    import minigrad

    ref, lib = libraries
    modes.warm_up(torch)
    modes.warm_up(minigrad)
    forward = program_from_text("fw", "fwAD = torch.autograd.forward_ad\nlevel = fwAD.enter_dual_level()\n"
                                      "x = torch.tensor(np.array([0.5, 1.5]), requires_grad=True)\n"
                                      "d = fwAD.make_dual(x, torch.tensor(np.array([1.0, 2.0])))\n"
                                      "t = fwAD.unpack_dual(d.var()).tangent\nfwAD.exit_dual_level()")
    found = [compare._compare_step(a, b, forward) for a, b in zip(runner.run(forward, ref), runner.run(forward, lib))]
    assert ("second-order node name", "t.grad_fn: torch SumBackward1, minigrad SumBackward0") in found
    assert compare.check(forward, ref, lib) is None
    assert exclusions.FORWARD_UNCOMPARED == {"second-order node name", "second-order graph"}
    normal = program_from_text("normal", "x = torch.tensor(np.array([0.5, 1.5]), requires_grad=True)")
    assert compare._forward_mode(forward) and not compare._forward_mode(normal)


# -- ill-conditioned programs (conditioning.py) -------------------------------------------------------------


def _input_program(name: str, arr: np.ndarray, *lines: str):
    """A program whose input ``x`` holds ``arr`` as a generated program's does (the array the rule moves)."""
    from parityfuzz.program import Program, Stmt

    head = Stmt("x = torch.tensor({arr})", target="x", kind="input", array=arr)
    rest = program_from_text(name, "\n".join(lines)).stmts
    return Program(name, (head,) + rest)


def _patched(monkeypatch, name: str, wrong):
    """minigrad's ``torch.<name>`` replaced by ``wrong(original, x)`` for this test."""
    import minigrad

    original = getattr(minigrad, name)
    monkeypatch.setattr(minigrad, name, lambda x: wrong(original, x))


def _batch(program, libraries):
    ref, lib = libraries
    return fuzz.run_batch([program], ref, lib)


def test_a_wrong_result_of_a_well_conditioned_program_is_counted(libraries, monkeypatch):
    """exp off by 0.1%: PyTorch's own exp moves by 1 ulp at 1-ulp input changes, so the mismatch counts."""
    import minigrad

    _patched(monkeypatch, "exp", lambda exp, x: exp(x) * 1.001)
    prog = _input_program("wrong exp", np.array([0.3, 1.7], dtype="float32"), "y = torch.exp(x)")
    result = _batch(prog, libraries)
    assert [m.category for m in result.mismatches] == ["value"] and result.ill == []
    _patched(monkeypatch, "tan", lambda tan, x: tan(x) * 1.001)  # tan well away from its poles too
    prog = _input_program("wrong tan", np.array([0.3, -0.7], dtype="float32"), "y = torch.tan(x * 3)")
    result = _batch(prog, libraries)
    assert [m.category for m in result.mismatches] == ["value"] and result.ill == []
    assert minigrad.exp is not np.exp  # (the patch is minigrad's, undone after the test)


def test_a_wrong_result_at_an_exact_input_is_counted(libraries, monkeypatch):
    """Integers and halves are kinks the generator draws on purpose; the rule never moves them: sign(0) = 1 counts."""
    import minigrad

    _patched(monkeypatch, "sign", lambda sign, x: sign(x) + (x == 0).to(minigrad.float64))
    prog = _input_program("wrong sign", np.array([0.0, 0.5, -2.0]), "y = torch.sign(x)")
    result = _batch(prog, libraries)
    assert [m.category for m in result.mismatches] == ["value"] and result.ill == []


def test_a_1_ulp_difference_next_to_a_pole_is_ill_conditioned(libraries, monkeypatch):
    """tan(3x) at the float32 x next to pi/6 (3x is 4e-8 from the pole): a kernel 1 ulp off in its argument gives
    -6e6 where PyTorch gives -2.3e7; PyTorch's own tan at x moved by 1 ulp moves as far, so it is not counted, but
    reported."""
    import minigrad

    ref, lib = libraries
    x = np.array([np.float32(np.pi / 6), 0.3], dtype="float32")
    _patched(monkeypatch, "tan", lambda tan, v: tan(minigrad.tensor(np.nextafter(v.detach().numpy(), np.inf))))
    prog = _input_program("pole", x, "y = torch.tan(x * 3)")
    m = compare.check(prog, ref, lib)
    assert m is not None and m.category == "value", m  # a mismatch the comparison alone would count
    result = fuzz.run_batch([prog], ref, lib)
    assert result.mismatches == [] and [p.program.name for p in result.ill] == ["pole"]
    assert "ill-conditioned" in result.summary() and "0 disagree" in result.summary()
    far = _input_program("far", np.array([0.3, -0.2], dtype="float32"), "y = torch.tan(x * 3)")
    assert compare.check(far, ref, lib) is None  # the same kernel away from the pole: 1 ulp, within tolerance
