#!/usr/bin/env bash
# Packaging check: a wheel built from this directory installs into a
# scratch venv of the python3 on PATH (offline: no index) and imports.
# The wheel comes from `python3 -m build` (Debian's python3-build where
# the python3 on PATH lacks it), else from `pip wheel` with an installed
# setuptools and wheel; both without build isolation, since the package
# index may be unreachable.
set -euo pipefail
cd "$(dirname "$0")"
scratch=$(mktemp -d); trap 'rm -rf "$scratch" build quire_sdk.egg-info' EXIT
how=""
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import build, setuptools, wheel' 2>/dev/null; then
    "$py" -m build --wheel --no-isolation --outdir "$scratch/dist" . >"$scratch/build.log" 2>&1 || { tail -20 "$scratch/build.log"; exit 1; }
    how="$py -m build"; break
  fi
done
if [ -z "$how" ]; then
  for py in python3 /usr/bin/python3; do
    if "$py" -c 'import setuptools, wheel' 2>/dev/null; then
      "$py" -m pip wheel --no-deps --no-build-isolation --no-index -w "$scratch/dist" . >"$scratch/build.log" 2>&1 || { tail -20 "$scratch/build.log"; exit 1; }
      how="$py -m pip wheel"; break
    fi
  done
fi
if [ -z "$how" ]; then
  echo "ci: skipping the Python packaging check: no python3 has build, or setuptools and wheel (apt-get install python3-build)"
  exit 0
fi
wheel=$(ls "$scratch"/dist/quire_sdk-*.whl)
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/python" -m pip install --quiet --no-index "$wheel"
cd "$scratch"
"$scratch/venv/bin/python" - "$wheel" "$how" <<'PY'
import sys
import quire
from quire import Client, parse_template
text, _ = parse_template("Hello {{name}}").render({"name": "Ann"})
assert text == "Hello Ann", text
assert quire.__file__.startswith(sys.prefix), quire.__file__
Client("http://127.0.0.1:1").prompts().close()
print(f"ci: quire-sdk {quire.__version__} built ({sys.argv[2]}: {sys.argv[1].rsplit('/', 1)[1]}), installed in a scratch venv and imported")
PY
