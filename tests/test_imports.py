import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "statement",
    [
        "import theory, allocation",
        "import coded",
        "import coded.errors, coded._validation, coded._rng",
        "import mapreduce",
    ],
)
def test_light_imports_do_not_load_galois_or_distributed(statement):
    code = (
        f"{statement}; import sys; "
        "heavy = [m for m in ('galois', 'distributed') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
