"""benchmarks/screenshots.py refuses in one line, exit 2, where it cannot run (no chromium, no playwright); where
it can, the slow tier's browser test drives the same pages (tests/leaderboard/test_browser.py)."""

import sys

import pytest

from benchmarks import _browser, screenshots


@pytest.mark.parametrize("missing", ["chromium", "playwright"])
def test_no_browser_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path, missing):
    if missing == "chromium":
        monkeypatch.setattr(_browser, "CHROMIUM", str(tmp_path / "no-chromium"))
    else:
        monkeypatch.setattr(_browser, "CHROMIUM", sys.executable)  # a file that is there (not a dpkg package)
        monkeypatch.setattr(_browser.shutil, "which", lambda name: None)
        monkeypatch.setitem(sys.modules, "playwright.sync_api", None)  # import fails
    monkeypatch.setattr(sys, "argv", ["screenshots.py", "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as stop:
        screenshots.main()
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1 and missing in err
    assert not list(tmp_path.glob("*.png"))  # nothing written
