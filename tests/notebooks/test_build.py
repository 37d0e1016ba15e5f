"""The stored notebooks are what notebooks/src/ generates: same cells, same types, same order, same
exercise metadata.

Regenerating writes into a temporary folder without executing anything, so this is fast; a
failure means someone edited an .ipynb by hand or forgot `make notebooks` after editing a source.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

SOURCES = sorted((Path(__file__).resolve().parents[2] / "notebooks" / "src").glob("[0-9][0-9]_*.py"))


def test_the_sources_are_the_lessons_numbered_so_far():
    """00 to 14 (13, forward mode, came after 14, the reference engine: lessons are never renumbered)."""
    assert [p.name[:2] for p in SOURCES] == [f"{i:02d}" for i in range(15)]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_stored_notebooks_match_their_source(build, notebooks_dir, source, tmp_path):
    fresh = build.build(source, out_dir=tmp_path, run=False)
    assert fresh, f"{source.name} produced no notebook"
    for version, path in fresh.items():
        rel = path.relative_to(tmp_path)
        stored_path = notebooks_dir / rel
        assert stored_path.exists(), f"{rel} is missing: run `make notebooks`"
        stored = nbformat.read(stored_path, as_version=4)
        regenerated = nbformat.read(path, as_version=4)
        assert build.cell_signature(stored) == build.cell_signature(regenerated), (
            f"{rel} ({version}) differs from src/{source.name}: run `make notebooks`")
        assert stored.metadata.get("minigrad_course") == regenerated.metadata.get("minigrad_course")


def test_learners_open_the_lessons_with_blanks_and_solutions_sit_apart(build):
    """The notebooks at the top of notebooks/ are the learner versions; solutions/ has the rest."""
    for source in SOURCES[1:]:
        assert build.targets(source) == {
            "learner": Path(f"{source.stem}.ipynb"), "solution": Path(f"solutions/{source.stem}.ipynb")}
    assert build.targets(SOURCES[0]) == {"learner": Path("00_start_here.ipynb")}  # the index has no exercise


def test_no_stale_notebooks_and_no_copies(notebooks_dir, build):
    """Every stored notebook comes from a source (a renamed source leaves no orphan behind), and the
    checks exist once: the installed module, no generated copy."""
    stems = {p.stem for p in SOURCES}
    for nb in notebooks_dir.glob("*.ipynb"):
        assert nb.stem in stems, f"{nb.name} has no source in notebooks/src/"
    with_solutions = {p.stem for p in SOURCES if "solution" in build.targets(p)}
    for nb in (notebooks_dir / "solutions").glob("*"):
        assert nb.suffix == ".ipynb" and nb.stem in with_solutions, f"solutions/{nb.name} has no source"
    assert not (notebooks_dir / "exercises").exists(), "the old exercises/ folder is back"
    copies = [p for p in notebooks_dir.rglob("*.py") if "def check_" in p.read_text(encoding="utf-8")]
    assert copies == [notebooks_dir / "minigrad_course" / "__init__.py"]


def test_check_mode_reports_no_drift(build, capsys):
    assert build.main(["--check"]) == 0, capsys.readouterr().out


def test_makefile_has_the_notebooks_target(notebooks_dir):
    makefile = (notebooks_dir.parent / "Makefile").read_text(encoding="utf-8")
    # the catalogs first (a changed English paragraph is marked fuzzy), then both languages (issue 32)
    assert ("\nnotebooks: install\n\t$(PY) notebooks/i18n.py\n\t$(COURSE_ENV) $(PY) notebooks/build.py $(LESSONS)\n"
            "\t$(PY) notebooks/build.py --lang zh $(LESSONS)\n") in makefile


# -- exercises and points --------------------------------------------------------------------------------


def test_every_exercise_declares_points_and_its_registered_check(build, course):
    declared = [e for source in SOURCES for e in build.exercises(source)]
    assert [e.id for e in declared] == ["1", "2", "3", "4", "5", "6a", "6b", "7", "8", "9", "10", "11", "12", "13a",
                                        "13b", "13c", "14a", "14b"]
    assert [e.id for e in declared] == list(course.EXERCISES)
    for e in declared:
        assert e.points >= 1
        assert course.EXERCISES[e.id].__name__ == e.check, f"exercise {e.id} calls {e.check}"
        assert getattr(course, e.check).exercise == e.id


def test_exercise_metadata_in_both_versions(build):
    for source in SOURCES[1:]:
        declared = {e.id: e for e in build.exercises(source)}
        nbs = {v: build.generate(source, v) for v in ("learner", "solution")}
        for version, nb in nbs.items():
            assert nb.metadata["minigrad_course"]["exercises"] == [e.as_dict() for e in declared.values()]
            roles = [(c.metadata["minigrad_course"]["exercise"], c.metadata["minigrad_course"]["role"])
                     for c in nb.cells if "exercise" in c.metadata.get("minigrad_course", {})]
            assert {i for i, _ in roles} == set(declared)
            for cell in nb.cells:
                meta = cell.metadata.get("minigrad_course")
                tags = cell.metadata.get("tags", [])
                if meta is None or meta == {"role": "reveal"}:
                    # a reveal cell (its output answers a quiz) is stored without output in the learner version
                    assert tags == (["nbval-ignore-output"] if meta and version == "learner" else [])
                    continue
                assert cell.cell_type == "code"
                # learner versions: nbval runs the exercise cells but compares everything else
                assert tags == (["nbval-ignore-output"] if version == "learner" else [])
                if meta["role"] == "check":
                    e = declared[meta["exercise"]]
                    assert meta == {"exercise": e.id, "role": "check", "points": e.points, "check": e.check}
                    assert f"{e.check}(" in cell.source


def test_exercises_listing(build, capsys):
    assert build.main(["--exercises"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 18
    assert out[6].split()[:3] == ["06_turning_autograd_off", "6b", "check_evaluate"]


# -- the source format --------------------------------------------------------------------------------


SAMPLE = '''# %% [markdown]
# # Title
#
# Text, and a link to [lesson 3](03_backward.ipynb) and [the index](00_start_here.ipynb).

# %%
x = 1

# %% answer=42
def f():
    # PLACEHOLDER: return ...
    # SOLUTION
    return x + 1
    # END SOLUTION

# %% check=42 points=3
check_thing(f)

# %% [markdown] solution-only
# Only with solutions.

# %% learner-only
print("only for learners")
'''


def _versions(build, tmp_path, text=SAMPLE):
    src = tmp_path / "42_sample.py"
    src.write_text(text, encoding="utf-8")
    return {v: build.generate(src, v) for v in ("solution", "learner")}


def test_markers_resolve_per_version(build, tmp_path):
    nbs = _versions(build, tmp_path)
    sol = [c[:2] for c in build.cell_signature(nbs["solution"])]
    lea = [c[:2] for c in build.cell_signature(nbs["learner"])]
    assert sol[0][0] == "markdown" and sol[0][1].startswith("# Title\n\nText")
    assert sol[1][0] == lea[1][0] == "markdown" and "Solutions." in sol[1][1] and "Exercises included" in lea[1][1]
    assert "solutions/42_sample.ipynb" in lea[1][1] and "../42_sample.ipynb" in sol[1][1]
    assert ("code", "def f():\n    return x + 1") in sol
    assert ("code", "def f():\n    return ...") in lea
    assert ("markdown", "Only with solutions.") in sol and ("markdown", "Only with solutions.") not in lea
    assert ("code", 'print("only for learners")') in lea and ("code", 'print("only for learners")') not in sol


def test_exercise_cells_carry_their_metadata(build, tmp_path):
    nbs = _versions(build, tmp_path)
    for version, nb in nbs.items():
        assert nb.metadata["minigrad_course"] == {
            "source": "src/42_sample.py", "version": version,
            "exercises": [{"id": "42", "check": "check_thing", "points": 3}]}
        answer, check = [c for c in nb.cells if "minigrad_course" in c.metadata]
        assert answer.metadata["minigrad_course"] == {"exercise": "42", "role": "answer"}
        assert check.metadata["minigrad_course"] == {"exercise": "42", "role": "check", "points": 3,
                                                     "check": "check_thing"}
        assert check.metadata["otter"] == {"tests": ["42"]}, "otter-grader runs test 42 right after this cell"
        assert "otter" not in answer.metadata
        assert build.is_exercise_cell(answer) and build.is_exercise_cell(check)


HIDDEN = """
# %% hidden=42
def test_other_values(f):
    \"\"\"f on values the check does not use.\"\"\"
    assert f() == 2, "f() is not 2\\n  hint: return x + 1"
"""


def test_hidden_cells_are_in_no_notebook_and_in_the_autograder_version(build, tmp_path):
    text = SAMPLE + HIDDEN
    for nb in _versions(build, tmp_path, text).values():
        assert not any("test_other_values" in c.source for c in nb.cells)
    src = tmp_path / "42_sample.py"
    files = build.autograder_tests(src)
    assert list(files) == ["42"]
    test_file = files["42"]
    assert "name = '42'" in test_file and "points = 3" in test_file and "all_or_nothing = True" in test_file
    assert "from minigrad_course import check_thing" in test_file
    assert "check_thing(*(env[n] for n in names), quiet=True)" in test_file
    assert "test_other_values = test_case(name='hidden: other_values', hidden=True)(_hidden(test_other_values))" in \
        test_file
    compile(test_file, "42.py", "exec")


def test_learner_exercise_outputs_are_blanked(build, tmp_path):
    nb = _versions(build, tmp_path)["learner"]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="out\n")]
            cell.execution_count = 1
    build.blank_exercises(nb)
    kept = [(build.is_exercise_cell(c), bool(c.outputs)) for c in nb.cells if c.cell_type == "code"]
    assert kept == [(False, True), (True, False), (True, False), (False, True)]


def test_learner_placeholders_compile(build, tmp_path):
    nb = _versions(build, tmp_path)["learner"]
    for cell in nb.cells:
        if cell.cell_type == "code":
            compile(cell.source, "<cell>", "exec")


def test_ids_and_metadata_are_deterministic(build, tmp_path):
    first = _versions(build, tmp_path)
    second = _versions(build, tmp_path)
    for version in first:
        assert nbformat.writes(first[version]) == nbformat.writes(second[version])


@pytest.mark.parametrize("text, message", [
    ("x = 1\n# %%\n", "text before the first"),
    ("# %% [markdown]\nnot a comment\n", "Markdown lines start with"),
    ("# %%\n# SOLUTION\nx = 1\n", "not closed"),
    ("# %%\n# END SOLUTION\n", "without '# SOLUTION'"),
    ("# %%\n# SOLUTION\n# PLACEHOLDER: x = ...\n# END SOLUTION\n", "placeholder inside"),
    ("# %% solution-only learner-only\nx = 1\n", "both"),
    ("# %% [markdown] sometimes\n# x\n", "unknown cell flag"),
    ("# %% grade=42\nx = 1\n", "unknown cell flag"),
    ("# %% answer=42\n# PLACEHOLDER: x = ...\n# %% check=42\ncheck_x(x)\n", "declares the exercise's points"),
    ("# %% answer=42\n# PLACEHOLDER: x = ...\n# %% check=42 points=two\ncheck_x(x)\n", "whole number"),
    ("# %% answer=42 points=1\n# PLACEHOLDER: x = ...\n", "belongs on the check= cell"),
    ("# %% answer=7\n# PLACEHOLDER: x = ...\n# %% check=7 points=1\ncheck_x(x)\n", "not numbered after its lesson"),
    ("# %% answer=42x1\n# PLACEHOLDER: x = ...\n", "should be the lesson's number"),
    ("# %% answer=42\nx = 1\n# %% check=42 points=1\ncheck_x(x)\n", "holds a solution"),
    ("# %% check=42 points=1\ncheck_x(x)\n", "no answer= cell before"),
    ("# %% answer=42\n# PLACEHOLDER: x = ...\n", "no check= cell"),
    ("# %% answer=42\n# PLACEHOLDER: x = ...\n# %% check=42 points=1\nx = 2\n", "exactly one check_"),
    ("# %% answer=42\n# PLACEHOLDER: x = ...\n# %% check=42 points=1\ncheck_x(x)\n# %% answer=42\n"
     "# PLACEHOLDER: y = ...\n", "already checked"),
    ("# %% answer=42 solution-only\n# PLACEHOLDER: x = ...\n", "in both versions"),
    ("# %% [markdown] answer=42\n# text\n", "belongs on a code cell"),
    ("# %% answer=42\n# PLACEHOLDER: x = ...\n# %% hidden=42\ndef test_a(x):\n    pass\n# %% check=42 points=1\n"
     "check_x(x)\n", "come after its check= cell"),
    ("# %% answer=42\n# PLACEHOLDER: x = ...\n# %% check=42 points=1\ncheck_x(x)\n# %% hidden=42\nx = 1\n",
     "defines one or more test_"),
    ("# %% answer=42\n# PLACEHOLDER: x = ...\n# %% check=42 points=1\ncheck_x(x + 1)\n", "ends with check_"),
    ("# %% answer=42 hidden=42\n# PLACEHOLDER: x = ...\n", "not several"),
    ("# %% [markdown] reveal\n# text\n", "reveal belongs on a code cell of both versions"),
    ("# %% reveal solution-only\nprint(1)\n", "reveal belongs on a code cell of both versions"),
])
def test_format_errors_name_the_line(build, tmp_path, text, message):
    with pytest.raises(build.SourceError, match=message):
        _versions(build, tmp_path, text)


def test_solution_links_stay_in_solutions(build):
    text = "Next: [3](03_backward.ipynb), or [the index](00_start_here.ipynb)."
    assert build.solution_links(text) == "Next: [3](03_backward.ipynb), or [the index](../00_start_here.ipynb)."


def test_streams_are_stored_as_shown(build):
    """A progress bar redraws its line with carriage returns: the stored output is its last state,
    in one stream output, as the notebook shows it (and as nbval compares it)."""
    out = nbformat.v4.new_output
    outputs = [out("stream", name="stdout", text="\repochs:   0%| 0/10"), out("stream", name="stdout",
               text="\repochs:  50%| 5/10"), out("stream", name="stdout", text="\repochs: 100%| 10/10\n"),
               out("stream", name="stderr", text="warning\n"), out("stream", name="stdout", text="a\r\nb\n")]
    merged = build.coalesce_streams(outputs)
    assert [(o.name, o.text) for o in merged] == [
        ("stdout", "epochs: 100%| 10/10\n"), ("stderr", "warning\n"), ("stdout", "a\nb\n")]


def test_a_reveal_cell_is_stored_without_output_in_the_learner_version(build, tmp_path):
    """`# %% reveal`: a cell whose output answers a quiz above it runs in both versions, but the learner
    version keeps no output of it (tagged for nbval like an exercise cell); the solution version keeps it."""
    text = SAMPLE + "\n# %% reveal\nprint(\"the answer is 42\")\n"
    nbs = _versions(build, tmp_path, text)
    for version, nb in nbs.items():
        (cell,) = [c for c in nb.cells if c.source == 'print("the answer is 42")']
        assert cell.metadata["minigrad_course"] == {"role": "reveal"} and build.is_reveal_cell(cell)
        assert cell.metadata.get("tags", []) == (["nbval-ignore-output"] if version == "learner" else [])
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="the answer is 42\n")]
        cell.execution_count = 1
        if version == "learner":
            build.blank_exercises(nb)
        assert bool(cell.outputs) == (version == "solution")
