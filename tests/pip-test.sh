#!/bin/sh
# pip-test.sh: pip install ./python into a fresh virtual environment, offline, then the package imported from there finds the build's library through HOGTRAIN_LIB or make install's PREFIX/lib, trains, and says to set HOGTRAIN_LIB when it finds none.
# SPDX-License-Identifier: BSD-2-Clause
# usage: HOG_BUILD=build sh tests/pip-test.sh   (prints TAP lines; run by make test)
# Debian's python3 makes the environment (--system-site-packages: cffi,
# NumPy, SciPy and scikit-learn are Debian's), and its setuptools builds the
# package (--no-build-isolation --no-index: nothing is downloaded). pip
# builds in the folder it is given, so it gets a copy of python/.
set -u
build=$(cd "${HOG_BUILD:-build}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/hog-pip-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - # SKIP $1"; }
not_ok() { # not_ok WHAT [LOG]: a failed case, with the tail of its log
    n=$((n + 1))
    echo "not ok $n - $1"
    [ $# -gt 1 ] && [ -f "$2" ] && tail -n 15 "$2" | sed 's/^/# /'
}

if ! [ -x "$py" ] || ! "$py" -c 'import venv, ensurepip, setuptools' >/dev/null 2>&1; then
    skip "Debian's python3 with venv and setuptools (python3-venv, python3-setuptools: make deps)"
    echo "1..$n"
    exit 0
fi
# What pip and the package are to see of this shell: no pyenv, no pip
# configuration, no PYTHONPATH to the checkout, no library path.
run() { # run COMMAND...: in the scratch folder, outside the checkout
    (cd "$tmp/elsewhere" && env -u PYTHONPATH -u PYTHONHOME -u LD_LIBRARY_PATH -u HOGTRAIN_LIB \
        -u VIRTUAL_ENV PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1 "$@")
}
mkdir "$tmp/elsewhere"
mkdir "$tmp/src" && cp -R "$root/python/." "$tmp/src/" && rm -rf "$tmp/src/build" "$tmp/src"/*.egg-info
venv=$tmp/v
if run "$py" -m venv --system-site-packages "$venv" >"$tmp/venv.log" 2>&1 &&
    run "$venv/bin/python" -m pip install --no-build-isolation --no-index "$tmp/src" >"$tmp/pip.log" 2>&1; then
    ok "python3 -m venv --system-site-packages, then pip install --no-build-isolation --no-index ./python"
else
    not_ok "python3 -m venv --system-site-packages, then pip install --no-build-isolation --no-index ./python" \
        "$tmp/pip.log"
    sed 's/^/# /' "$tmp/venv.log"
    echo "1..$n"
    exit 1
fi

# The package's version is the header's.
header=$(awk '/^#define HOG_VERSION_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $3 } END { print v }' \
    "$root/include/hogtrain.h")
shown=$(run "$venv/bin/python" -m pip show hogtrain 2>/dev/null | sed -n 's/^Version: //p')
if [ -n "$header" ] && [ "$shown" = "$header" ]; then
    ok "pip show hogtrain: version $shown, include/hogtrain.h's HOG_VERSION_*"
else
    not_ok "pip show hogtrain: version '$shown', include/hogtrain.h's HOG_VERSION_* say '$header'"
fi

# Imported from the environment, outside the checkout, with the build's
# library: it trains.
site=$(run "$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cat >"$tmp/elsewhere/fit.py" <<'EOF'
import numpy as np
import hogtrain
X = np.array([[0.0, 1.0], [1.0, 0.0]] * 50)
y = np.array([0, 1] * 50)
est = hogtrain.HogwildClassifier(random_state=1).fit(X, y)
print(hogtrain.__file__, hogtrain.LIBRARY_PATH, hogtrain.__version__, est.score(X, y))
EOF
run env HOGTRAIN_LIB="$build/libhogtrain.so.0" "$venv/bin/python" fit.py >"$tmp/fit.out" 2>&1
if [ "$(cat "$tmp/fit.out")" = "$site/hogtrain/__init__.py $build/libhogtrain.so.0 $header 1.0" ]; then
    ok "the installed package, with HOGTRAIN_LIB the build's library, imports and trains: $(cat "$tmp/fit.out")"
else
    not_ok "the installed package, with HOGTRAIN_LIB the build's library, imports from $site and trains" "$tmp/fit.out"
fi

# No HOGTRAIN_LIB and no library installed: the error says to set it.
run "$venv/bin/python" -c 'import hogtrain; print(hogtrain.LIBRARY_PATH)' >"$tmp/none.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
    skip "the message without a library: this machine has one installed ($(tail -n 1 "$tmp/none.out"))"
elif grep -q 'ImportError: hogtrain: libhogtrain.so.0 not found or not usable; set HOGTRAIN_LIB to its path' \
    "$tmp/none.out"; then
    ok "without HOGTRAIN_LIB or an installed library, import says to set HOGTRAIN_LIB"
else
    not_ok "without HOGTRAIN_LIB or an installed library, import says to set HOGTRAIN_LIB" "$tmp/none.out"
fi

# make install PREFIX=the environment puts the library in its lib/, which
# the loader is not told of: the package looks there.
cp "$build/libhogtrain.so.0" "$venv/lib/libhogtrain.so.0"
run "$venv/bin/python" fit.py >"$tmp/prefix.out" 2>&1
if [ "$(cat "$tmp/prefix.out")" = "$site/hogtrain/__init__.py $venv/lib/libhogtrain.so.0 $header 1.0" ] ||
    { [ "$rc" -eq 0 ] && grep -q ' 1.0$' "$tmp/prefix.out"; }; then
    ok "without HOGTRAIN_LIB, the library in the environment's PREFIX/lib is found: $(cat "$tmp/prefix.out")"
else
    not_ok "without HOGTRAIN_LIB, the library in the environment's PREFIX/lib ($venv/lib) is found" "$tmp/prefix.out"
fi

if run "$venv/bin/python" -m pip uninstall -y hogtrain >"$tmp/uninstall.log" 2>&1 && ! [ -e "$site/hogtrain" ]; then
    ok "pip uninstall hogtrain removes the package"
else
    not_ok "pip uninstall hogtrain removes the package" "$tmp/uninstall.log"
fi
echo "1..$n"
