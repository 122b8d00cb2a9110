"""Numbers that do not depend on the CPU: the numeric doctests under other BLAS kernels.

OpenBLAS picks a kernel for the CPU it runs on (SkylakeX on AVX-512, Haswell on
AVX2, ...), and kernels round differently. Every doctest and documentation
example must print the same under any of them, so this test runs them again in
two subprocesses started together, each with a different kernel forced
(``OPENBLAS_CORETYPE``), the first with one BLAS thread and the second with two
(so each kernel and each way of splitting a product is tried once), and checks
inside each subprocess that the forced kernel is the one in force.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXPECTED_CORE = "CODED_EXPECTED_OPENBLAS_CORE"

# the kernels a CPU can run, by the instruction-set flag each needs
KERNEL_FLAGS = {
    "SkylakeX": "avx512f",
    "Haswell": "avx2",
    "Sandybridge": "avx",
    "Nehalem": "sse4_2",
}


def _openblas_cores() -> set[str]:
    """The OpenBLAS kernels (architectures) in force in this process."""
    import numpy  # noqa: F401  (loads numpy's OpenBLAS)
    import scipy.linalg  # noqa: F401  (and SciPy's)
    from threadpoolctl import threadpool_info

    return {
        info["architecture"]
        for info in threadpool_info()
        if info["internal_api"] == "openblas"
    }


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    flags = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return set(flags.partition(":")[2].split())


def forced_kernels() -> list[str]:
    """Two kernels this CPU supports other than the one OpenBLAS picks itself."""
    flags = _cpu_flags()
    native = _openblas_cores()
    usable = [k for k, flag in KERNEL_FLAGS.items() if flag in flags]
    return [k for k in usable if k not in native][:2]


def test_forced_kernel_is_in_force():
    """Run inside the subprocess: the kernel asked for is the one computing."""
    expected = os.environ.get(EXPECTED_CORE)
    if expected is None:
        pytest.skip("runs inside test_numeric_doctests_under_a_forced_kernel")
    assert _openblas_cores() == {expected}


def test_forced_kernels_are_two_on_x86_64_with_avx():
    if "avx" not in _cpu_flags():
        pytest.skip("needs an x86-64 CPU with AVX (Sandybridge or newer)")
    assert len(forced_kernels()) == 2


FORCED = list(zip(forced_kernels(), (1, 2), strict=False))
FORCED_TEST = "test_numeric_doctests_under_a_forced_kernel"


def _start(kernel: str, threads: int, log: Path) -> subprocess.Popen[bytes]:
    """Start the numeric doctests under `kernel` on `threads` BLAS threads."""
    env = {
        **os.environ,
        "OPENBLAS_CORETYPE": kernel,
        "OPENBLAS_NUM_THREADS": str(threads),
        EXPECTED_CORE: kernel,
        "MPLBACKEND": "Agg",
    }
    env.pop("OPENBLAS_L2_SIZE", None)  # sized for the native kernel, not this one
    with log.open("wb") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--doctest-modules",
                "coded",
                "allocation",
                "mapreduce",
                "theory",
                "tests/test_docs.py::test_examples_of_page",
                "tests/test_cpu_kernels.py::test_forced_kernel_is_in_force",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


@pytest.fixture(scope="module")
def forced_runs(request, tmp_path_factory):
    """The selected kernels' runs, started together (mostly one core each)."""
    selected = {
        item.callspec.params["kernel"]
        for item in request.session.items  # doctest items have no originalname
        if getattr(item, "originalname", "") == FORCED_TEST
    }
    logs = tmp_path_factory.mktemp("kernels")
    runs = {
        k: (_start(k, t, logs / f"{k}.log"), logs / f"{k}.log")
        for k, t in FORCED
        if k in selected
    }
    yield runs
    for process, _ in runs.values():
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(("kernel", "threads"), FORCED)
def test_numeric_doctests_under_a_forced_kernel(kernel, threads, forced_runs):
    process, log = forced_runs[kernel]
    process.wait(timeout=560)
    output = log.read_text(encoding="utf-8", errors="replace")
    assert process.returncode == 0, output[-6000:]
    summary = output.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary)
    assert "skipped" not in summary  # the kernel check ran, it did not skip
