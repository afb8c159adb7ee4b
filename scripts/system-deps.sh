#!/usr/bin/env bash
# What `make test` needs that pip cannot install: Debian's Chromium (the browser tests drive /usr/bin/chromium).
# As root it installs it through apt; otherwise it prints one line saying what to install and fails.
set -euo pipefail

# ORMAH_CHROMIUM and ORMAH_NO_APT=1 exist for the test of this script (tests/cli/test_system_deps.py).
CHROMIUM=${ORMAH_CHROMIUM:-/usr/bin/chromium}
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && [ "${ORMAH_NO_APT:-0}" != "1" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Chromium for the browser tests (apt-get install chromium chromium-driver)..." >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  [ -x "$CHROMIUM" ] && exit 0
fi
echo "make test needs Chromium at $CHROMIUM for the browser tests: run 'sudo apt-get install -y chromium chromium-driver' (or your system's chromium package), then make test again." >&2
exit 1
