#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (C++ units and Python scenarios) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure -j2 "$@"
