"""The README's and the guide's profile -> solve -> run flow runs as written."""

import re
from pathlib import Path

import numpy as np
import pytest

import allocation
import coded

pytestmark = pytest.mark.runtime

ROOT = Path(__file__).parent.parent.parent
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide" / "cluster.md"


@pytest.fixture(scope="module")
def eight():
    """The embedded cluster of the README: eight in-process workers."""
    with coded.LocalCodedCluster(n_workers=8) as running:
        yield running.client


def guide_snippet() -> str:
    """The python block of the guide's "Measure, then allocate" section."""
    section = GUIDE.read_text().split("## Measure, then allocate", 1)[1]
    return re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)


def readme_spans() -> list[str]:
    """The README's inline code of the flow: profile, then each solver."""
    text = " ".join(README.read_text().split())  # spans may wrap lines
    spans = re.findall(r"`([^`]*(?:profile_workers|solve_\w+)\(\w+[^`]*)`", text)
    return [s for s in spans if s.startswith(("fit =", "allocation.solve_"))]


def test_readme_flow_runs_for_hcmm_and_bpcc(eight):
    spans = readme_spans()
    assert spans == [
        "fit = coded.profile_workers(client)",
        "allocation.solve_hcmm(fit, m)",
        "allocation.solve_bpcc(fit, m)",
    ]
    m = 4000
    namespace = {"coded": coded, "allocation": allocation, "client": eight, "m": m}
    exec(spans[0], namespace)
    fit = namespace["fit"]
    costs = fit.costs
    assert costs.call_se > 0.0
    assert costs.encode_flops_per_second > 0.0
    assert costs.encode_entries_per_second > 0.0
    assert costs.check_entries_per_second > 0.0
    A = np.random.default_rng(0).standard_normal((m, 50))
    x = np.ones(50)
    for span in spans[1:]:
        plan = eval(span, namespace)
        assert plan.loads.max() <= m  # unidentified workers are capped at m rows
        result = coded.coded_matmul(A, x, allocation=plan, client=eight)
        assert np.allclose(result.product, A @ x)
        assert result.verification == "freivalds"
        assert result.predicted_seconds == pytest.approx(
            plan.expected_latency
            + costs.call_seconds
            + plan.encode_flops(50) / costs.encode_flops_per_second
            + plan.total_rows * 50 / costs.encode_entries_per_second
            + plan.total_rows * 50 / costs.check_entries_per_second
        )


def test_guide_flow_runs_as_written(eight, capsys):
    rng = np.random.default_rng(1)
    A, x = rng.standard_normal((3000, 40)), rng.standard_normal(40)
    namespace = {"client": eight, "A": A, "x": x}
    exec(compile(guide_snippet(), str(GUIDE), "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in printed] == ["hcmm", "bpcc"]
    assert np.allclose(namespace["result"].product, A @ x)
    profile = namespace["profile"]
    assert profile.a_identified.shape == (8,)
    assert set(profile.unidentified) == set(np.flatnonzero(~profile.a_identified))
