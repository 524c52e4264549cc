# test_ffi.py: the package's view of the library: struct layouts and constants as the C compiler sees hogtrain.h, where the library is found, and the GIL released during calls.
# SPDX-License-Identifier: BSD-2-Clause
import os
import re
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

from conftest import BUILD, ROOT
from hogtrain import HogwildClassifier, _ffi
from hogtrain._ffi import ffi

STRUCTS = ["hog_read_params", "hog_dataset_info", "hog_csr", "hog_train_params", "hog_metrics", "hog_model_info",
           "hog_weights", "hog_file_run"]


def declared_constants():
    """Every enum constant and #define of the package's declarations."""
    return sorted(set(re.findall(r"\b(HOG_[A-Z0-9_]+)\b", _ffi.CDEF)))


def test_every_struct_and_constant_is_laid_out_as_the_compiler_lays_out_hogtrain_h(tmp_path):
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include <hogtrain.h>", "int main(void) {"]
    want = []
    for name in STRUCTS:
        lines.append('printf("%%zu\\n", sizeof(%s));' % name)
        want.append(ffi.sizeof(name))
        for field, f in ffi.typeof(name).fields:
            lines.append('printf("%%zu\\n", offsetof(%s, %s));' % (name, field))
            want.append(f.offset)
    for const in declared_constants():
        lines.append('printf("%%zu\\n", (size_t)(long)%s);' % const)
        want.append(getattr(_ffi.lib, const) % 2**64)
    lines.append("return 0; }")
    (tmp_path / "layout.c").write_text("\n".join(lines))
    subprocess.run(["cc", "-std=c11", "-I", str(ROOT / "include"), "-o", str(tmp_path / "layout"),
                    str(tmp_path / "layout.c")], check=True)
    got = subprocess.run([str(tmp_path / "layout")], check=True, capture_output=True, text=True).stdout.split()
    assert [int(g) for g in got] == want
    assert len(want) > 150


def test_the_package_knows_the_header_s_version():
    text = (ROOT / "include" / "hogtrain.h").read_text()
    major, minor, patch = (int(re.search(r"#define HOG_VERSION_%s (\d+)" % k, text).group(1))
                           for k in ("MAJOR", "MINOR", "PATCH"))
    assert _ffi.HEADER_VERSION == major * 10000 + minor * 100 + patch
    assert _ffi.lib.hog_version_number() == _ffi.HEADER_VERSION


def python(code, env):
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("HOGTRAIN_LIB", "LD_LIBRARY_PATH")}
    env.update(extra)
    return env


def test_the_library_is_found_by_variable_next_to_the_package_and_on_the_system_path(tmp_path):
    lib = str(BUILD / "libhogtrain.so.0")
    r = python("import hogtrain; print(hogtrain.LIBRARY_PATH)", clean_env(PYTHONPATH=str(ROOT / "python"),
                                                                           HOGTRAIN_LIB=lib))
    assert r.stdout.strip() == lib, r.stderr
    r = python("import hogtrain", clean_env(PYTHONPATH=str(ROOT / "python"), HOGTRAIN_LIB=str(tmp_path / "no.so")))
    assert "ImportError: hogtrain: libhogtrain.so.0 not found or not usable; set HOGTRAIN_LIB" in r.stderr
    assert str(tmp_path / "no.so") + " (HOGTRAIN_LIB)" in r.stderr
    r = python("import hogtrain; print(hogtrain.LIBRARY_PATH)", clean_env(PYTHONPATH=str(ROOT / "python"),
                                                                           LD_LIBRARY_PATH=str(BUILD)))
    assert r.stdout.strip() == "libhogtrain.so.0", r.stderr
    shutil.copytree(ROOT / "python" / "hogtrain", tmp_path / "hogtrain")
    shutil.copy(lib, tmp_path / "hogtrain" / "libhogtrain.so.0")
    r = python("import hogtrain; print(hogtrain.LIBRARY_PATH)", clean_env(PYTHONPATH=str(tmp_path)))
    assert r.stdout.strip() == str(tmp_path / "hogtrain" / "libhogtrain.so.0"), r.stderr


def test_the_gil_is_released_while_the_library_works(tmp_path):
    """fit() on a FIFO blocks inside the library until this thread writes the
    data into the FIFO: which this thread can do only if the call released
    the GIL. Were it held, nothing would write and the test would hang, so
    faulthandler ends the process with a traceback after 60 s instead."""
    import faulthandler
    fifo = tmp_path / "rows.svm"
    os.mkfifo(fifo)
    rng = np.random.RandomState(0)
    lines = "".join("%d 1:%.3f 2:%.3f\n" % (i % 2, rng.rand() + i % 2, rng.rand()) for i in range(2000))
    est = HogwildClassifier(n_jobs=1, bind=False)
    errors = []

    def fit():
        try:
            est.fit(str(fifo))
        except Exception as e:  # reported below, on the test's thread
            errors.append(e)

    faulthandler.dump_traceback_later(60, exit=True)
    try:
        t = threading.Thread(target=fit)
        t.start()
        with open(fifo, "w") as f:  # waits for the library to open the FIFO
            f.write(lines)
        t.join()
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert not errors, errors
    assert list(est.classes_) == [0, 1]
    assert est.coef_[0, 0] > 0, "feature 1 tells the classes apart"


def test_bind_is_auto_by_default_and_takes_true_false_or_auto():
    """bind='auto' (the library's HOG_BIND_AUTO) unless given; True and False
    are 1 and 0; anything else is refused by name."""
    assert HogwildClassifier().get_params()["bind"] == "auto"
    assert HogwildClassifier()._train_params("logistic").bind == _ffi.lib.HOG_BIND_AUTO
    assert HogwildClassifier(bind=True)._train_params("logistic").bind == 1
    assert HogwildClassifier(bind=False)._train_params("logistic").bind == 0
    for bad in ("sometimes", 2, None):
        with pytest.raises(ValueError, match="bind=%r: expected True, False or 'auto'" % (bad,)):
            HogwildClassifier(bind=bad)._train_params("logistic")
