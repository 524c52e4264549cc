# _version.py: the package's version, the library's it was written for (HOG_VERSION_* of include/hogtrain.h); pyproject.toml reads it without importing the package.
# SPDX-License-Identifier: BSD-2-Clause
__version__ = "0.2.0"
