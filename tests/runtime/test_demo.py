import pytest

from coded.__main__ import main

pytestmark = pytest.mark.runtime


def test_quick_demo_prints_the_table(capsys):
    assert main(["demo", "--quick", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "seed = 3, 3 repeats" in out
    rows = [line for line in out.splitlines() if "(A @" in line]
    labels = [line[:28].strip() for line in rows]
    assert labels == [
        "uncoded (A @ x)",
        "2-replication (A @ x)",
        "(8, 6) MDS (A @ x)",
        "(8, 6) polynomial (A @ B)",
    ]
    assert rows[0].split()[-4] == "1.00x"
    assert all(float(line.split()[-1]) < 1e-8 for line in rows)


def test_demo_saves_the_timeline_of_the_last_run(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "timeline.png"
    assert main(["demo", "--quick", "--plot", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        f"timeline of the last run ((8, 6) polynomial (A @ B)) saved to {path}" in out
    )
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_rejects_a_plot_in_a_missing_folder(capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["demo", "--plot", str(tmp_path / "nowhere" / "t.png")])
    assert "--plot: folder" in capsys.readouterr().err


def test_demo_rejects_bad_repeats(capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--repeats", "0"])
    assert "--repeats must be >= 1, got 0" in capsys.readouterr().err
