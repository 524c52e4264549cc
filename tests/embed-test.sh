#!/bin/sh
# embed-test.sh: make install into a scratch tree, then the C and C++ programs of docs/library.md built with plain pkg-config against the shared library, the C one again with pkg-config --static, and the installed Python package.
# SPDX-License-Identifier: BSD-2-Clause
# usage: HOG_BUILD=build sh tests/embed-test.sh   (prints TAP lines; run by make test)
# The programs compiled are the manual's, taken from docs/library.md as
# written: the fenced block after each "<!-- embed-test: NAME" line.
set -u
build=$(cd "${HOG_BUILD:-build}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
tmp=$(mktemp -d /tmp/hog-embed-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { # not_ok WHAT [LOG]: a failed case, with the tail of its log
    n=$((n + 1))
    echo "not ok $n - $1"
    [ $# -gt 1 ] && [ -f "$2" ] && tail -n 15 "$2" | sed 's/^/# /'
}
check() { # check WHAT LOG COMMAND...: ok when COMMAND succeeds
    what=$1 log=$2
    shift 2
    if "$@" >"$log" 2>&1; then ok "$what"; else not_ok "$what" "$log"; fi
}

# The block of docs/library.md marked NAME, into FILE.
example() {
    awk -v name="$1" '
        index($0, "<!-- embed-test: " name " ") == 1 { want = 1; next }
        want && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }
    ' "$root/docs/library.md" >"$2"
    [ -s "$2" ]
}

# make install, as a packager does: into DESTDIR, for /usr/local. The
# command runs from make test, whose jobserver is not this make's.
dest=$tmp/root
lib=$dest/usr/local/lib
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$root" --no-print-directory BUILD="$build" \
    DESTDIR="$dest" PREFIX=/usr/local install >"$tmp/install.log" 2>&1; then
    ok "make install DESTDIR=... PREFIX=/usr/local"
else
    not_ok "make install DESTDIR=... PREFIX=/usr/local" "$tmp/install.log"
    exit 1
fi
real=$(cd "$lib" && ls libhogtrain.so.*.*.* 2>/dev/null)
if [ -f "$lib/$real" ] && [ "$(readlink "$lib/libhogtrain.so.0")" = "$real" ] &&
    [ "$(readlink "$lib/libhogtrain.so")" = libhogtrain.so.0 ] && [ -f "$lib/libhogtrain.a" ] &&
    [ -f "$dest/usr/local/include/hogtrain.h" ] && [ -x "$dest/usr/local/bin/hogtrain" ] &&
    [ -f "$lib/pkgconfig/hogtrain.pc" ] && ls "$lib"/python3.*/dist-packages/hogtrain/_ffi.py >/dev/null 2>&1; then
    ok "installed: $real, its links libhogtrain.so.0 and libhogtrain.so, the .a, the header, the .pc, the command, the package"
else
    not_ok "installed: the libraries, their links, the header, the .pc, the command, the package"
    find "$dest" | sed 's/^/# /'
fi
readelf -d "$lib/$real" >"$tmp/dynamic" 2>&1
if grep -q 'SONAME.*\[libhogtrain.so.0\]' "$tmp/dynamic" && ! grep -q 'NEEDED.*jemalloc' "$tmp/dynamic" &&
    ! grep -q jemalloc "$lib/pkgconfig/hogtrain.pc"; then
    ok "soname libhogtrain.so.0; neither the library nor hogtrain.pc brings jemalloc"
else
    not_ok "soname libhogtrain.so.0; neither the library nor hogtrain.pc brings jemalloc" "$tmp/dynamic"
fi
if nm -D --defined-only "$lib/$real" | awk '$2 != "A" { print $3 }' | grep -qv '^hog_'; then
    not_ok "the shared library exports hog_ symbols only"
    nm -D --defined-only "$lib/$real" | awk '$2 != "A" { print $3 }' | grep -v '^hog_' | head | sed 's/^/# /'
else
    ok "the shared library exports hog_ symbols only"
fi
# The library changes nothing process-wide and reads no environment behind
# its caller's back: no umask (which races every thread of the program) and
# no getenv (the command passes HOG_TOPOLOGY in); hog_link_params_from_env,
# called by a program on purpose, reads environ itself.
if nm -D --undefined-only "$lib/$real" | awk '{ print $NF }' | sed 's/@.*//' |
    grep -qx -e umask -e getenv -e secure_getenv -e setenv -e putenv; then
    not_ok "the shared library calls neither umask nor getenv"
    nm -D --undefined-only "$lib/$real" | grep -w -e umask -e getenv -e secure_getenv -e setenv -e putenv |
        sed 's/^/# /'
else
    ok "the shared library calls neither umask nor getenv"
fi

export PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_LIBDIR="$lib/pkgconfig"
flags=$(pkg-config --cflags --libs hogtrain)
want="-I$dest/usr/local/include -L$dest/usr/local/lib -lhogtrain"
if [ "$(echo $flags)" = "$want" ]; then
    ok "pkg-config --cflags --libs hogtrain: $want"
else
    not_ok "pkg-config --cflags --libs hogtrain gave '$flags', expected '$want'"
fi

# The manual's programs, built with nothing but pkg-config's flags and
# run against the installed library.
if example example.c "$tmp/example.c" && example example.cpp "$tmp/example.cpp"; then
    ok "docs/library.md holds the C and C++ examples (embed-test: example.c, example.cpp)"
else
    not_ok "docs/library.md holds the C and C++ examples (embed-test: example.c, example.cpp)"
fi
# shellcheck disable=SC2086 # pkg-config's flags are words
check "the C example builds with cc -std=c11 -Wall -Wextra -Wpedantic -Werror \$(pkg-config --cflags --libs hogtrain)" \
    "$tmp/cc.log" cc -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$tmp/example" "$tmp/example.c" $flags
if readelf -d "$tmp/example" 2>/dev/null | grep -q 'NEEDED.*\[libhogtrain.so.0\]' &&
    LD_LIBRARY_PATH="$lib" "$tmp/example" >"$tmp/c.out" 2>&1 && grep -q '^training accuracy' "$tmp/c.out"; then
    ok "it links libhogtrain.so.0 and runs: $(cat "$tmp/c.out")"
else
    not_ok "the C example links libhogtrain.so.0 and runs" "$tmp/c.out"
fi
# shellcheck disable=SC2086
check "the C++ example builds with c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror \$(pkg-config --cflags --libs hogtrain)" \
    "$tmp/cxx.log" c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -o "$tmp/example_cpp" "$tmp/example.cpp" $flags
if LD_LIBRARY_PATH="$lib" "$tmp/example_cpp" >"$tmp/cpp.out" 2>&1 && grep -q '^weights 2.00' "$tmp/cpp.out"; then
    ok "it runs and finds the weights: $(cat "$tmp/cpp.out")"
else
    not_ok "the C++ example runs and finds the weights" "$tmp/cpp.out"
fi

# Static: a tree with libhogtrain.a only, as a static-only install has it;
# Libs.private must then be all the link needs.
cp -a "$dest" "$tmp/static"
rm -f "$tmp/static/usr/local/lib"/libhogtrain.so*
export PKG_CONFIG_SYSROOT_DIR="$tmp/static" PKG_CONFIG_PATH="$tmp/static/usr/local/lib/pkgconfig" \
    PKG_CONFIG_LIBDIR="$tmp/static/usr/local/lib/pkgconfig"
static=$(pkg-config --static --cflags --libs hogtrain)
# shellcheck disable=SC2086
check "the C example builds with \$(pkg-config --static --cflags --libs hogtrain): $static" \
    "$tmp/static.log" cc -std=c11 -Wall -Wextra -Werror -o "$tmp/example_static" "$tmp/example.c" $static
if ! readelf -d "$tmp/example_static" 2>/dev/null | grep -q 'NEEDED.*libhogtrain' &&
    "$tmp/example_static" >"$tmp/s.out" 2>&1 && grep -q '^training accuracy' "$tmp/s.out"; then
    ok "the static program needs no libhogtrain.so and runs: $(cat "$tmp/s.out")"
else
    not_ok "the static program needs no libhogtrain.so and runs" "$tmp/s.out"
fi

# The installed Python package finds the installed library by its soname.
site=$(ls -d "$lib"/python3.*/dist-packages)
if env -u HOGTRAIN_LIB PYTHONPATH="$site" LD_LIBRARY_PATH="$lib" "$py" -c '
import numpy as np, hogtrain
X = np.array([[0.0, 1.0], [1.0, 0.0]] * 50)
y = np.array([0, 1] * 50)
est = hogtrain.HogwildClassifier().fit(X, y)
assert hogtrain.LIBRARY_PATH == "libhogtrain.so.0", hogtrain.LIBRARY_PATH
print(hogtrain.__file__, est.score(X, y))
assert est.score(X, y) == 1.0
' >"$tmp/py.out" 2>&1 && grep -q "^$site/hogtrain/__init__.py 1.0" "$tmp/py.out"; then
    ok "the installed Python package imports, loads libhogtrain.so.0 from the library path and trains"
else
    not_ok "the installed Python package imports, loads libhogtrain.so.0 from the library path and trains" "$tmp/py.out"
fi
