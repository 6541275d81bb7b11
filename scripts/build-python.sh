#!/usr/bin/env bash
# Builds the Python client's wheel, dist/packages/notestream-<version>-py3-none-any.whl, with the
# version of package.json (the service's), and prints its path. `make packages` calls it.
#
# The build: setuptools' PEP 517 backend, run by
#   python3 -m pip wheel --no-build-isolation --no-deps --no-index
# on a copy of clients/python with the version stamped into its pyproject.toml (the source tree
# stays clean, and two builds at once do not meet). Nothing is fetched: PyPI is out of reach on
# the CI machine.
#
# setuptools builds wheels by itself from 70.1 on; before that it needs the `wheel` package. The
# CI machine's python3 (pyenv's 3.11) brings setuptools 65 without `wheel`, so the first Python
# that can build is used: $PYTHON, python3, Debian's /usr/bin/python3; where none can and this is
# a Debian machine we may install on (root, as CI runs), Debian's python3-pip, python3-setuptools
# and python3-wheel are installed first. Otherwise it says what is missing and fails.
set -euo pipefail
cd "$(dirname "$0")/.."

can_build() {
  "$1" - <<'PY' >/dev/null 2>&1
import importlib.util
import setuptools  # before anything that imports distutils: Debian's setuptools insists
assert importlib.util.find_spec("pip"), "pip wheel needs pip"
major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
assert (major, minor) >= (61, 0), "PEP 621 metadata needs setuptools 61"
assert (major, minor) >= (70, 1) or importlib.util.find_spec("wheel"), "bdist_wheel needs the wheel package"
PY
}

builder() {
  for py in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1 && can_build "$py"; then command -v "$py"; return 0; fi
  done
  return 1
}

if ! command -v python3 >/dev/null 2>&1; then
  echo "build-python: python3 not found; the Python client needs python3 (3.9 or later) to build" >&2
  exit 1
fi
if ! py="$(builder)"; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "build-python: no python3 here has pip with setuptools >= 61 and bdist_wheel: installing Debian's python3-pip python3-setuptools python3-wheel" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip python3-setuptools python3-wheel >/dev/null
  fi
  py="$(builder)" || {
    echo "build-python: cannot build the wheel: no python3 here has pip with setuptools >= 61 and either setuptools >= 70.1 or the wheel package" >&2
    echo "  (Debian: apt-get install python3-pip python3-setuptools python3-wheel; elsewhere: python3 -m pip install 'setuptools>=70.1')" >&2
    exit 1
  }
fi

version="$(bun -e 'console.log(require("./package.json").version)' 2>/dev/null || node -p 'require("./package.json").version')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r clients/python/pyproject.toml clients/python/README.md clients/python/src "$work/"
sed -i "s/^version = \".*\"/version = \"$version\"/" "$work/pyproject.toml"
grep -q "^version = \"$version\"$" "$work/pyproject.toml" || { echo "build-python: could not stamp version $version into pyproject.toml" >&2; exit 1; }

mkdir -p dist/packages
out="$(pwd)/dist/packages"
wheel="$out/notestream-$version-py3-none-any.whl"
rm -f "$wheel"
(cd "$work" && "$py" -m pip wheel --quiet --no-build-isolation --no-deps --no-index -w "$out" . >&2)
[ -f "$wheel" ] || { echo "build-python: pip wheel did not write $wheel" >&2; exit 1; }
echo "$wheel"
