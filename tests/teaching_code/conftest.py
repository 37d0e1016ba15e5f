"""Ports of public teaching code, run against torch and against minigrad.

Every test that takes the ``lib`` argument runs twice: ``[torch]`` with PyTorch 2.13 (skipped without
torch locally, a failure under CI=true, like every parity test) and ``[minigrad]``. A port that needs an
API minigrad does not have yet carries ``@pytest.mark.needs("nn.Embedding", ...)``: its minigrad run is
then a strict xfail (the suite stays green, and the day the APIs land the XPASS fails the run, so the
marker gets removed). Only the errors a missing API raises count as the expected failure
(AttributeError, TypeError, IndexError, NotImplementedError): a wrong value (AssertionError) on minigrad
is never hidden behind that marker. A known behaviour that differs from PyTorch's is marked
``@pytest.mark.differs("...")`` instead: a strict xfail that only an AssertionError satisfies.

Shared helpers live in ``helpers.py`` and ``d2l_lib.py`` (the parts of d2l.ai's ``d2l`` package the d2l
ports use), loaded here by path and registered as the modules ``teaching_helpers`` and ``teaching_d2l``
(tests are not importable under ``--import-mode=importlib``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from pathlib import Path

import pytest

MISSING_API_ERRORS = (AttributeError, TypeError, IndexError, NotImplementedError)


def _load(name: str, file: str) -> None:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(file))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


_load("teaching_helpers", "helpers.py")
_load("teaching_d2l", "d2l_lib.py")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs(*apis): the port's minigrad run is a strict xfail until these minigrad APIs exist")
    config.addinivalue_line(
        "markers", "differs(*behaviours): minigrad's run fails an assertion where it differs from PyTorch "
                   "(a strict xfail limited to AssertionError, until the behaviour is fixed)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "lib" not in metafunc.fixturenames:
        return
    needs = metafunc.definition.get_closest_marker("needs")
    differs = metafunc.definition.get_closest_marker("differs")
    reasons, raises = [], ()
    if needs is not None:
        reasons.append("needs: " + ", ".join(needs.args))
        raises += MISSING_API_ERRORS
    if differs is not None:
        reasons.append("differs from PyTorch: " + ", ".join(differs.args))
        raises += (AssertionError,)
    marks = [pytest.mark.xfail(strict=True, raises=raises, reason="; ".join(reasons))] if reasons else []
    metafunc.parametrize("lib", [pytest.param("torch", id="torch"),
                                 pytest.param("minigrad", id="minigrad", marks=marks)], indirect=True)


@pytest.fixture
def lib(request):
    """The library under test, bound where the original program says ``torch``.

    Both libraries run on one thread here (torch's intra-op pool, and the BLAS NumPy calls): the
    recorded values then do not depend on the core count, and on a busy 2-core machine a spinning
    BLAS thread pool made small float32 products 100x slower (9 ms for 512x32 @ 32x32).
    """
    with contextlib.ExitStack() as stack:
        try:
            import threadpoolctl
        except ImportError:  # (a dependency of scikit-learn, in the lab extra: present in CI)
            pass
        else:
            stack.enter_context(threadpoolctl.threadpool_limits(1, "blas"))
        if request.param == "torch":
            torch = request.getfixturevalue("torch")
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            stack.callback(torch.set_num_threads, threads)
            yield torch
            return
        import minigrad

        yield minigrad
