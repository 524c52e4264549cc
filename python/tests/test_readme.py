# test_readme.py: the README's Python example, taken from README.md and run as written.
# SPDX-License-Identifier: BSD-2-Clause
import os
import re
import subprocess
import sys

from conftest import ROOT


def readme_example(name):
    """The fenced block that follows the README's "<!-- embed-test: NAME" line."""
    text = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- embed-test: %s\b[^\n]*-->\n```[a-z+]*\n(.*?)\n```" % re.escape(name), text, re.S)
    assert m, "README.md has no block marked embed-test: %s" % name
    return m.group(1)


def test_the_readme_python_example_runs_as_written(tmp_path):
    code = readme_example("example.py")
    assert len(code.splitlines()) == 5
    (tmp_path / "example.py").write_text(code + "\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout.split()[-1]) > 0.93, r.stdout
