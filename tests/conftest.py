"""Shared pytest setup for minigrad's tests.

torch (2.13.0, the local CPU wheel) is an optional test dependency: `.ci/run` installs it,
`make test` alone does not. Tests get it through the ``torch`` fixture::

    def test_mul_matches(torch):
        a = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        ...

or mark a whole test/module with ``@pytest.mark.requires_torch`` (then ``import torch``
inside the test body). Without torch such tests are skipped locally; when the environment
variable ``CI`` is ``true`` they FAIL instead, so CI is never green because the parity tests
did not run. The same applies to ``pytest.importorskip("torch")`` and to any skip whose reason
starts with ``missing tool:`` (e.g. ``pytest.skip("missing tool: chromium not found")``).

Conftest files are not importable modules under ``--import-mode=importlib``: share helpers
as fixtures here, not as ``from tests.conftest import ...``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re

import pytest
from hypothesis import settings

TORCH_VERSION = "2.13.0"

# The course's checks answer in the learner's language (MINIGRAD_LANG, else the locale, issue 32): the suite
# expects English whatever the machine's locale, and a test of another language sets it itself. Subprocesses
# (make grade, nbval's kernels) inherit it.
os.environ["MINIGRAD_LANG"] = "en"

# Skip reasons that mean "a tool the suite needs is missing": under CI=true they become failures.
_MISSING_TOOL_REASONS = re.compile(
    r"could not import 'torch'"  # pytest.importorskip("torch")
    r"|^(?:Skipped: )?missing tool:"  # pytest.skip("missing tool: ...")
)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


# Hypothesis explores new examples on every local run (that is how it finds bugs), but CI draws
# the same examples every time: a red CI run lands nothing, so it must not depend on luck.
settings.register_profile("ci", derandomize=True, database=None)
if in_ci():
    settings.load_profile("ci")


def _import_torch():
    """Return (torch module, None) or (None, reason it could not be imported)."""
    try:
        torch = importlib.import_module("torch")
    except Exception as exc:  # ImportError, or a broken install raising something else
        return None, f"{type(exc).__name__}: {exc}"
    return torch, None


def _missing_torch(reason: str) -> None:
    message = (
        f"missing tool: torch is not importable ({reason}). "
        f"Install it with `.venv/bin/pip install torch=={TORCH_VERSION}` (or `make torch`)."
    )
    if in_ci():
        pytest.fail(f"CI=true and {message}", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def torch():
    """The imported torch module; skips without torch, fails without it under CI=true."""
    module, reason = _import_torch()
    if module is None:
        _missing_torch(reason)
    return module


@pytest.fixture(scope="session")
def mg():
    """minigrad (the viz tests take it as a fixture, beside ``torch``)."""
    import minigrad

    return minigrad


@pytest.fixture(params=["minigrad", "torch"])
def lib(request):
    """A test run once with minigrad and once with PyTorch (the ``torch`` fixture: skipped without torch, a
    failure under CI=true). tests/teaching_code has its own."""
    if request.param == "torch":
        return request.getfixturevalue("torch")
    return request.getfixturevalue("mg")


@pytest.fixture(scope="session")
def pgv():
    """pygraphviz, the layout engine viz draws with; a "missing tool:" skip (a failure under CI=true)."""
    try:
        import pygraphviz
    except ImportError as exc:
        pytest.skip(f"missing tool: pygraphviz is not importable ({exc})")
    return pygraphviz


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--without-torch", action="store_true",
        help="deselect the tests that need torch (the `torch` fixture, directly or through another fixture, "
             "`lib` run with torch, the requires_torch marker): what runs on Pythons torch has no wheel for "
             "(make test-pythons). Any other missing tool still fails under CI=true.")


def needs_torch(item: pytest.Item) -> bool:
    """Does this test need torch: a fixture of its closure is `torch`, it runs with `lib` = torch, or it is marked."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return "torch" in getattr(item, "fixturenames", ()) or params.get("lib") == "torch" \
        or item.get_closest_marker("requires_torch") is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if not config.getoption("--without-torch"):
        return
    deselected = [item for item in items if needs_torch(item)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not needs_torch(item)]


def pytest_configure(config: pytest.Config) -> None:
    # Also declared in pyproject.toml; repeated here so the marker works with any ini file.
    config.addinivalue_line(
        "markers",
        "requires_torch: the test needs torch (2.13.0); skipped without it, but fails when CI=true",
    )


def pytest_report_header(config: pytest.Config) -> str:
    # Read the version from metadata: importing torch here would cost every run about a second.
    try:
        found = f"torch {importlib.metadata.version('torch')}"
    except importlib.metadata.PackageNotFoundError:
        found = "torch not installed"
    return f"minigrad tests: {found}; CI={os.environ.get('CI') or '(unset)'}"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("requires_torch") is not None:
        module, reason = _import_torch()
        if module is None:
            _missing_torch(reason)


def _skip_reason(longrepr) -> str:
    # A skip's longrepr is (path, lineno, "Skipped: reason").
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _fail_missing_tool_skip(report) -> None:
    if not (in_ci() and report.skipped and not hasattr(report, "wasxfail")):
        return
    reason = _skip_reason(report.longrepr).removeprefix("Skipped: ")
    if _MISSING_TOOL_REASONS.search(reason):
        report.outcome = "failed"
        report.longrepr = f"CI=true: a test was skipped for a missing tool, which CI does not allow: {reason}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    _fail_missing_tool_skip(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    # Module-level pytest.importorskip("torch") skips at collection time.
    report = yield
    _fail_missing_tool_skip(report)
    return report
