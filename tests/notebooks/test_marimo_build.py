"""The marimo lessons (notebooks/marimo/) are what notebooks/marimo_build.py writes from today's lessons."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_every_lesson_has_its_marimo_version_and_it_is_current():
    pytest.importorskip("marimo", reason="missing tool: marimo; pip install -e .[test]")
    stored = sorted(p.stem for p in (REPO / "notebooks" / "marimo").glob("*.py"))
    assert stored == [p.stem for p in LESSONS]
    run = subprocess.run([sys.executable, str(REPO / "notebooks" / "marimo_build.py"), "--check"], cwd=REPO,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-2000:])


def test_marimo_accepts_every_lesson():
    pytest.importorskip("marimo", reason="missing tool: marimo; pip install -e .[test]")
    lessons = sorted(str(p) for p in (REPO / "notebooks" / "marimo").glob("*.py"))
    run = subprocess.run([sys.executable, "-m", "marimo", "check", *lessons], capture_output=True, text=True,
                         timeout=300)  # marimo's static check: one definition per name, cells it can parse
    assert run.returncode == 0 and "critical" not in run.stdout + run.stderr, (run.stdout, run.stderr)
