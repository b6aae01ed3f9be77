#!/usr/bin/env bash
# Installs the Debian packages dynrepl builds, tests and runs with; idempotent, safe to re-run.
# Extra package names given as arguments are installed too (bench/setup.sh adds its peers).
set -euo pipefail

# The binding layer uses CPython's C API directly (the op-call path is faster than pybind11's),
# and benchmarks are Python scripts run beside their peers, so neither pybind11 nor Google
# Benchmark is needed. readline and graphviz are for the REPL and the pictures.
pkgs=("$@"
  build-essential cmake ninja-build ccache pkg-config
  libpython3-dev python3-numpy
  python3-pil  # torchvision.utils.save_image writes images through PIL, as torchvision does
  libreadline-dev libfmt-dev libgraphviz-dev graphviz libboost-program-options-dev
  libopenblas-dev libgtest-dev
  libsleef-dev  # vector math: the transcendental kernels (core/ops/vmath.cpp)
  libxxhash-dev  # XXH3-128 digests of graph structure: plan-cache keys (core/ir/graph.cpp)
  clang libclang-rt-14-dev  # libFuzzer targets (tests/fuzz/libfuzzer/run.sh)
  chromium  # the HTML report's test renders it in a real browser, headless
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
