#!/usr/bin/env bash
# Installs the Debian packages dynrepl builds, tests and runs with; idempotent, safe to re-run.
# Extra package names given as arguments are installed too (bench/setup.sh adds its peers).
#
#   scripts/setup.sh --with-torch   also PyTorch 2.15 from PyPI, for `dynrepl --real-torch`: a venv
#                                   made with the Python dynrepl embeds (/usr/bin/python3), at
#                                   $DYNREPL_TORCH or /opt/torch-ref, reused when it has 2.15 (the
#                                   install takes about 2 minutes and 5.4 GB: its CUDA packages)
set -euo pipefail

with_torch=0
if [ "${1:-}" = "--with-torch" ]; then
  with_torch=1
  shift
fi

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

[ "$with_torch" -eq 0 ] || pkgs+=(python3-venv)

# The venv of --real-torch. A failed download is reported, not fatal: the --real-torch tests say
# they were skipped, and everything else still builds and runs.
install_torch() {
  local venv="${DYNREPL_TORCH:-/opt/torch-ref}"
  if [ -f "$venv/lib/python3.11/site-packages/torch/version.py" ] &&
    grep -q "__version__ = '2\.15\." "$venv/lib/python3.11/site-packages/torch/version.py"; then
    return 0
  fi
  echo "setup: installing PyTorch 2.15 from PyPI into $venv (about 2 minutes, 5.4 GB)"
  local sudo=""
  [ -w "$(dirname "$venv")" ] || sudo="sudo"
  if ! { $sudo /usr/bin/python3 -m venv "$venv" && $sudo "$venv/bin/pip" install -q --disable-pip-version-check "torch==2.15.*"; }; then
    echo "setup: WARNING: PyTorch 2.15 could not be installed into $venv; the --real-torch tests will be skipped" >&2
  fi
}

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  [ "$with_torch" -eq 0 ] || install_torch
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
[ "$with_torch" -eq 0 ] || install_torch
