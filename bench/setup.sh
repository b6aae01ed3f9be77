#!/usr/bin/env bash
# Installs the benchmark-only peer (Debian's python3-torch, a large download) with the project's
# own packages; idempotent. Not a build or test dependency: without it the torch columns say n/a.
set -euo pipefail
exec bash "$(dirname "$0")/../scripts/setup.sh" python3-torch
