#!/usr/bin/env bash
# Installs the benchmark-only peer (Debian's python3-torch); idempotent, safe to re-run.
# Not a build or test dependency: the benchmark shows "n/a" in the torch column without it.
set -euo pipefail

pkgs=(python3-torch python3-numpy)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "bench/setup: installing ${missing[*]} (python3-torch is a large download)"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
