#!/usr/bin/env bash
# Make sure `wrk` (the HTTP load generator benchmarks/pages.py drives) is installed: Debian package.
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v wrk >/dev/null; then
  as_root apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends wrk >/dev/null
fi
echo "wrk: $(command -v wrk)"
