# __init__.py: the hogtrain package: scikit-learn estimators over libhogtrain.so, the HOGWILD! trainer.
# SPDX-License-Identifier: BSD-2-Clause
"""hogtrain: linear models trained with HOGWILD! lock-free SGD on every core.

    from hogtrain import HogwildClassifier
    clf = HogwildClassifier(epochs=20).fit(X, y)   # NumPy, SciPy CSR, or a file path

The package calls the shared library libhogtrain.so.MAJOR through cffi (ABI
mode: nothing is compiled at import). It is found through HOGTRAIN_LIB (a
path), next to the package, or on the system's library path.
"""

from ._ffi import LIBRARY_PATH, HogtrainError, HogtrainValueError, ffi, lib
from .estimators import HogwildClassifier, HogwildRegressor, load

__version__ = ffi.string(lib.hog_version_string()).decode()

__all__ = ["HogwildClassifier", "HogwildRegressor", "HogtrainError", "HogtrainValueError", "load",
           "LIBRARY_PATH", "__version__"]
