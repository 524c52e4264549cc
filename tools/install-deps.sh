#!/bin/sh
# install-deps.sh: installs the Debian packages hogtrain needs to build, test and run its demo; silent when all are present.
# SPDX-License-Identifier: BSD-2-Clause
#
# Usage: sh tools/install-deps.sh
# Run as root (make deps does this). As another user it only checks, and says
# what to install when something is missing.
set -eu

# The build (compiler, pkg-config, libraries), the tests (Criterion) and the
# data the tests and demo use (LIBLINEAR's heart_scale, Fashion-MNIST), and
# Debian's python3 for the benchmark reports, clang for make fuzz (libFuzzer),
# and for bench/run: gnuplot-nox (plots), python3-sklearn (a peer), hwloc (lstopo).
# ZeroMQ (libzmq3-dev) carries the multi-node link; openmpi-bin and iproute2
# let the tests launch ranks with mpirun and in network namespaces.
# The Python package needs cffi, NumPy, SciPy and scikit-learn, its tests
# pytest, pip install ./python Debian's pip, venv and setuptools (and wheel,
# to build the package offline); the embedding test compiles a C++ program (g++).
packages="build-essential pkg-config libopenblas-dev libhwloc-dev liburing-dev \
libjemalloc-dev libcriterion-dev zlib1g-dev libzstd-dev libxxhash-dev libzmq3-dev liblinear-tools \
dataset-fashion-mnist python3 clang gnuplot-nox python3-sklearn hwloc openmpi-bin iproute2 \
g++ python3-cffi python3-numpy python3-scipy python3-pytest \
python3-pip python3-venv python3-setuptools python3-wheel"
# help2man makes the man pages from each command's --help (make man, make install).
packages="$packages help2man"

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps.sh: dpkg-query not found: this script knows Debian only." >&2
    echo "Install the equivalents of: $packages" >&2
    exit 1
fi

missing=
for p in $packages; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case $status in
        *" installed") ;;
        *) missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0
missing=${missing# }

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps.sh: missing Debian packages: $missing" >&2
    echo "Install them as root:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends $missing" >&2
    exit 1
fi

echo "install-deps.sh: installing $missing"
apt-get update
# shellcheck disable=SC2086 # one word per package
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing

still=
for p in $missing; do
    case $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) in
        *" installed") ;;
        *) still="$still $p" ;;
    esac
done
if [ -n "$still" ]; then
    echo "install-deps.sh: still not installed:$still" >&2
    exit 1
fi
