"""The stored notebooks are what notebooks/src/ generates: same cells, same types, same order.

Regenerating writes into a temporary folder without executing anything, so this is fast; a
failure means someone edited an .ipynb by hand or forgot `make notebooks` after editing a source.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

SOURCES = sorted((Path(__file__).resolve().parents[2] / "notebooks" / "src").glob("[0-9][0-9]_*.py"))


def test_there_are_eleven_sources():
    assert [p.name[:2] for p in SOURCES] == [f"{i:02d}" for i in range(11)]


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


def test_every_lesson_has_a_learner_version(build):
    for source in SOURCES[1:]:
        assert set(build.targets(source)) == {"solution", "learner"}, source.name
    assert set(build.targets(SOURCES[0])) == {"solution"}  # the index has no exercise


def test_no_stale_notebooks(notebooks_dir):
    """Every stored notebook comes from a source (a renamed source leaves no orphan behind)."""
    stems = {p.stem for p in SOURCES}
    for nb in notebooks_dir.glob("*.ipynb"):
        assert nb.stem in stems, f"{nb.name} has no source in notebooks/src/"
    for nb in (notebooks_dir / "exercises").glob("*.ipynb"):
        assert nb.stem.removesuffix("_learner") in stems, f"exercises/{nb.name} has no source"


def test_course_copy_is_in_sync(build, notebooks_dir):
    copy = notebooks_dir / "exercises" / "course.py"
    assert copy.read_text(encoding="utf-8") == build.course_copy_text(), "run `make notebooks`"


def test_check_mode_reports_no_drift(build, capsys):
    assert build.main(["--check"]) == 0, capsys.readouterr().out


def test_makefile_has_the_notebooks_target(notebooks_dir):
    makefile = (notebooks_dir.parent / "Makefile").read_text(encoding="utf-8")
    assert "\nnotebooks: install\n\t$(PY) notebooks/build.py\n" in makefile


# -- the source format --------------------------------------------------------------------------------


SAMPLE = '''# %% [markdown]
# # Title
#
# Text.

# %%
x = 1

# %%
def f():
    # PLACEHOLDER: return ...
    # SOLUTION
    return x + 1
    # END SOLUTION

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
    sol = build.cell_signature(nbs["solution"])
    lea = build.cell_signature(nbs["learner"])
    assert sol[0] == ("markdown", "# Title\n\nText.")
    assert sol[1][0] == lea[1][0] == "markdown" and "Solution version" in sol[1][1] and "Learner version" in lea[1][1]
    assert ("code", "def f():\n    return x + 1") in sol
    assert ("code", "def f():\n    return ...") in lea
    assert ("markdown", "Only with solutions.") in sol and ("markdown", "Only with solutions.") not in lea
    assert ("code", 'print("only for learners")') in lea and ("code", 'print("only for learners")') not in sol


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
    assert first["solution"].metadata["minigrad_course"] == {"source": "src/42_sample.py", "version": "solution"}


@pytest.mark.parametrize("text, message", [
    ("x = 1\n# %%\n", "text before the first"),
    ("# %% [markdown]\nnot a comment\n", "Markdown lines start with"),
    ("# %%\n# SOLUTION\nx = 1\n", "not closed"),
    ("# %%\n# END SOLUTION\n", "without '# SOLUTION'"),
    ("# %%\n# SOLUTION\n# PLACEHOLDER: x = ...\n# END SOLUTION\n", "placeholder inside"),
    ("# %% solution-only learner-only\nx = 1\n", "both"),
    ("# %% [markdown] sometimes\n# x\n", "unknown cell flag"),
])
def test_format_errors_name_the_line(build, tmp_path, text, message):
    with pytest.raises(build.SourceError, match=message):
        _versions(build, tmp_path, text)


def test_learner_links_stay_in_exercises(build):
    text = "Next: [3](03_backward.ipynb), or [the index](00_start_here.ipynb)."
    assert build.learner_links(text) == (
        "Next: [3](03_backward_learner.ipynb), or [the index](../00_start_here.ipynb).")
