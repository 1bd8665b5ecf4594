"""Where Chromium cannot be installed (Ubuntu's snap-only package, WSL), ``make test``
goes on and the browser tests skip with one line; under CI they fail instead.

tests/support.py's ``find_chromium`` is what the browser tests (tests/manual,
tests/viz/test_stepper.py) look Chromium up with; here it is pointed at a PATH
without one, and at one holding a stub that does not run, as Ubuntu's is.
"""

import os
import pathlib
import shutil
import subprocess

import pytest

from support import chromium_or_skip, find_chromium

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _stub(directory, name, status):
    path = directory / name
    path.write_text(f"#!/bin/sh\necho 'requires the chromium snap' >&2\nexit {status}\n")
    path.chmod(0o755)
    return path


def test_no_chromium_on_the_path_skips_with_one_line_saying_what_to_install(tmp_path,
                                                                            monkeypatch):
    monkeypatch.delenv("MLXREF_NEED_CHROMIUM", raising=False)
    assert find_chromium(str(tmp_path)) is None
    with pytest.raises(pytest.skip.Exception) as skipped:
        chromium_or_skip(str(tmp_path))
    message = str(skipped.value)
    assert "\n" not in message and "install Chromium or Google Chrome" in message


def test_a_chromium_that_does_not_run_is_not_chromium(tmp_path):
    _stub(tmp_path, "chromium-browser", 1)  # Ubuntu's apt stub, without snap
    assert find_chromium(str(tmp_path)) is None
    working = _stub(tmp_path, "google-chrome", 0)
    assert find_chromium(str(tmp_path)) == str(working)


def test_under_ci_a_missing_chromium_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("MLXREF_NEED_CHROMIUM", "1")
    with pytest.raises(pytest.fail.Exception, match="MLXREF_NEED_CHROMIUM"):
        chromium_or_skip(str(tmp_path))


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_tests_chromium_step_goes_on_where_none_can_be_installed(tmp_path):
    # No apt-get, no brew, no chromium on this PATH: `make chromium` cannot install one.
    make = shutil.which("make")
    env = dict(os.environ, PATH=str(tmp_path))
    failed = subprocess.run([make, "--no-print-directory", "chromium"], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert failed.returncode != 0 and "please install Chromium" in failed.stderr
    tried = subprocess.run([make, "--no-print-directory", "try-chromium"], cwd=ROOT, env=env,
                           capture_output=True, text=True)
    assert tried.returncode == 0, tried.stderr
    assert tried.stderr.strip().splitlines()[-1] == (
        "mlxref: no Chromium here: make test skips the browser tests (CI runs them)")
