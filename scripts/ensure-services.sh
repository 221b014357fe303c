#!/usr/bin/env bash
# Make sure Redis and PostgreSQL answer on 127.0.0.1, as the test suite needs them for real:
# start them when they are installed but stopped, install them (Debian packages) when missing.
# Also installs Debian's Chromium for the browser tests when /usr/bin/chromium is missing, and
# nginx and docker-compose for the deployment and cluster tests.
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  as_root apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
wait_for() {  # wait_for NAME COMMAND…
  local name=$1; shift
  for _ in $(seq 1 30); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  echo "ensure-services: $name did not come up" >&2; return 1
}

redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
if ! redis_up; then
  command -v redis-server >/dev/null || apt_install redis-server redis-tools
  mkdir -p /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --logfile /var/log/redis/wovepaper-ci.log >/dev/null 2>&1 \
  || redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  wait_for Redis redis_up
fi
echo "ensure-services: Redis is up"

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432; }
if ! command -v pg_isready >/dev/null || ! pg_up; then
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    apt_install postgresql
    # A fresh cluster asks for passwords on TCP; the tests connect as postgres over loopback.
    for hba in /etc/postgresql/*/main/pg_hba.conf; do
      sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
    done
  fi
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null \
    || pg_ctlcluster "$version" main start 2>/dev/null || pg_ctlcluster "$version" main reload
  wait_for PostgreSQL pg_up
fi
echo "ensure-services: PostgreSQL is up"

# The browser tests (tests/browser) drive Debian's Chromium through Playwright: `playwright install`
# cannot download its own build on these machines, and the tests fail without a browser.
if [ ! -x /usr/bin/chromium ]; then
  apt_install chromium
fi
/usr/bin/chromium --version >/dev/null 2>&1 || { echo "ensure-services: Chromium does not run" >&2; exit 1; }
echo "ensure-services: Chromium is ready"

# The cluster test runs Debian's nginx (as an unprivileged process with its own config); the
# deployment test validates compose.yaml with docker-compose (the v1 parser; no engine runs here).
missing=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v docker-compose >/dev/null || missing+=(docker-compose)
if [ ${#missing[@]} -gt 0 ]; then
  apt_install "${missing[@]}"
fi
echo "ensure-services: nginx and docker-compose are ready"

# npm installs axe-core, the accessibility engine the browser tests inject (make test runs npm ci).
if ! command -v npm >/dev/null; then
  apt_install nodejs npm
fi
echo "ensure-services: npm is ready"
