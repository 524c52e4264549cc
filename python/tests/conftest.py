# conftest.py: what the Python tests share: the repository, the build folder with the hogtrain command, and a scratch folder.
# SPDX-License-Identifier: BSD-2-Clause
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("HOG_BUILD", ROOT / "build"))


@pytest.fixture
def hogtrain_bin():
    """The hogtrain command of the build the tests run against."""
    path = BUILD / "hogtrain"
    assert path.exists(), "%s: build it first (make all)" % path
    return str(path)


@pytest.fixture
def gen_sparse():
    path = BUILD / "tools" / "gen_sparse"
    assert path.exists(), "%s: build it first (make all)" % path
    return str(path)
