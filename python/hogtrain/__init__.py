# __init__.py: the hogtrain package: scikit-learn estimators over libhogtrain.so, the HOGWILD! trainer.
# SPDX-License-Identifier: BSD-2-Clause
"""hogtrain: linear models and factorisation machines trained with HOGWILD! lock-free SGD on every core.

    from hogtrain import HogwildClassifier, HogwildFMClassifier
    clf = HogwildClassifier(epochs=20).fit(X, y)   # NumPy, SciPy CSR, or a file path
    fm = HogwildFMClassifier(n_factors=4).fit(X, y)  # pairs of features crossed through latent factors

The package calls the shared library libhogtrain.so.MAJOR through cffi (ABI
mode: nothing is compiled at import). It is found through HOGTRAIN_LIB (a
path), next to the package, on the system's library path, or in make
install's PREFIX/lib. __version__ is the package's, the header's it was
written for; LIBRARY_VERSION is the loaded library's (of that major
version, no older).
"""

from ._ffi import LIBRARY_PATH, HogtrainError, HogtrainValueError, ffi, lib
from ._version import __version__
from .estimators import HogwildClassifier, HogwildFMClassifier, HogwildFMRegressor, HogwildRegressor, load

LIBRARY_VERSION = ffi.string(lib.hog_version_string()).decode()

__all__ = ["HogwildClassifier", "HogwildRegressor", "HogwildFMClassifier", "HogwildFMRegressor", "HogtrainError",
           "HogtrainValueError", "load", "LIBRARY_PATH", "LIBRARY_VERSION", "__version__"]
