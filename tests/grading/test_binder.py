"""binder/ (repo2docker's configuration folder) gives a class the course with one link, on Binder and on a
JupyterHub with repo2docker images. Without Docker here, this tests what repo2docker would do with it: a
fresh virtual environment, `pip install -r binder/requirements.txt` from a copy of the repository's root
(repo2docker copies the repository in, then installs), and every lesson executed in that environment."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"

RUN_LESSONS = """
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

sys.path.insert(0, "notebooks")
import build  # runs a notebook in a kernel of this interpreter, stops at the first error

def run(path):
    build.execute(nbformat.read(path, as_version=4), path.parent)
    return path.name

paths = sorted(Path("notebooks").glob("[0-9][0-9]_*.ipynb"))
with ThreadPoolExecutor(2) as pool:
    for name in pool.map(run, paths):
        print("executed", name, flush=True)
"""


def test_the_configuration_is_what_repo2docker_reads():
    assert sorted(p.name for p in BINDER.iterdir()) == ["requirements.txt", "runtime.txt", "start"]
    lines = [line.strip() for line in (BINDER / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines == [".[lab]", "nbgitpuller>=1.2"], "the course as `make lab` installs it (copied, not editable), " \
                                                    "and nbgitpuller for hubs; nothing else, never torch"
    runtime = (BINDER / "runtime.txt").read_text().strip()
    major, minor = map(int, re.fullmatch(r"python-(\d+)\.(\d+)", runtime).groups())
    floor = re.search(r'^requires-python = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.MULTILINE).group(1)
    assert (major, minor) >= tuple(map(int, floor.removeprefix(">=").split("."))), (runtime, floor)
    start = BINDER / "start"
    assert os.access(start, os.X_OK), "repo2docker runs binder/start: it must be executable"
    text = start.read_text()
    assert text.startswith("#!/bin/bash") and text.rstrip().endswith('exec "$@"')
    assert "notebooks/.jupyter" in text and (ROOT / "notebooks" / ".jupyter" / "labconfig").is_dir()


def test_start_adds_the_course_settings_and_runs_the_server(tmp_path):
    out = subprocess.run([str(BINDER / "start"), "bash", "-c", 'echo "$JUPYTER_CONFIG_PATH"'],
                         env={**os.environ, "REPO_DIR": "/home/jovyan", "JUPYTER_CONFIG_PATH": "/elsewhere"},
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "/home/jovyan/notebooks/.jupyter:/elsewhere"


def test_requirements_install_into_a_fresh_venv_and_every_lesson_runs(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns(".venv", ".git", "build", "test-artifacts", "*.egg-info",
                                                             "__pycache__", ".pytest_cache", ".ruff_cache"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", "-r",
                              "binder/requirements.txt"], cwd=repo, capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]
    freeze = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True,
                            check=True).stdout
    names = {line.split("==")[0].lower() for line in freeze.splitlines()}
    assert {"minigrad-lab", "jupyterlab", "pygraphviz", "scikit-learn", "nbgitpuller"} <= names
    assert not {"torch", "otter-grader", "pytest"} & names, "students get the course only"
    run = subprocess.run([str(python), "-c", RUN_LESSONS], cwd=repo, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    lessons = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert run.stdout.split() == [w for name in lessons for w in ("executed", name)]


def test_links_open_the_first_lesson():
    import sys as _sys

    _sys.path.insert(0, str(ROOT / "notebooks"))
    try:
        import links
    finally:
        _sys.path.pop(0)
    assert (ROOT / links.FIRST_LESSON).exists()
    assert links.binder_link("https://github.com/acme/course.git") == (
        "https://mybinder.org/v2/gh/acme/course/main?urlpath=lab%2Ftree%2Fnotebooks%2F00_start_here.ipynb")
    assert links.nbgitpuller_link("https://hub.example.edu/", "https://github.com/acme/course", "fall") == (
        "https://hub.example.edu/hub/user-redirect/git-pull?repo=https%3A%2F%2Fgithub.com%2Facme%2Fcourse"
        "&branch=fall&urlpath=lab%2Ftree%2Fcourse%2Fnotebooks%2F00_start_here.ipynb")
