"""The README's API tour runs as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).parent.parent / "README.md"


@pytest.mark.runtime
def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 3
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
