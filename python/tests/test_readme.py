# test_readme.py: the Python examples of README.md and docs/, each taken from its page and run as written.
# SPDX-License-Identifier: BSD-2-Clause
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
MARK = r"<!-- embed-test: (%s)\b([^\n]*)-->\n```[a-z+]*\n(.*?)\n```"


def examples(name=r"[\w.-]+\.py"):
    """(page, name, what its mark says, code) for each fenced block after a "<!-- embed-test: NAME" line."""
    return [(page.relative_to(ROOT), m.group(1), m.group(2), m.group(3))
            for page in PAGES for m in re.finditer(MARK % name, page.read_text(), re.S)]


EXAMPLES = examples()


def run(code, tmp_path):
    (tmp_path / "example.py").write_text(code + "\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, env=env)


def test_the_python_page_holds_the_five_line_example_and_the_readme_one():
    assert [str(page) for page, _, _, _ in examples(re.escape("example.py"))] == ["docs/python.md"]
    assert [str(page) for page, _, _, _ in examples(re.escape("readme.py"))] == ["README.md"]


@pytest.mark.parametrize("page,name,mark,code", EXAMPLES, ids=["%s:%s" % (p, n) for p, n, _, _ in EXAMPLES])
def test_the_python_examples_run_as_written(page, name, mark, code, tmp_path):
    if "these five lines" in mark:
        assert len(code.splitlines()) == 5, "%s: %s is the five lines its mark promises" % (page, name)
    r = run(code, tmp_path)
    assert r.returncode == 0, r.stderr
    # "# about X" on the last line: what it prints last is X, give or take 0.03
    about = re.search(r"# about ([0-9.]+)$", code)
    if about:
        assert abs(float(r.stdout.split()[-1]) - float(about.group(1))) <= 0.03, r.stdout
