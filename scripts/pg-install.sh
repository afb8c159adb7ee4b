#!/usr/bin/env bash
# Installs PostgreSQL's server and headers from Debian's packages, then pgvector 0.8.6 built from the source kept in
# ../shared/vendor (by ../shared/scripts/install-postgres-pgvector.sh), for `make test-pg` and CI. Needs root.
# The shared script skips apt when any pg_config exists, and on these machines Debian's client package
# (postgresql-client-15, which ships psql) brings pg_config without the server or its headers: pgvector's build
# then stops at "postgres.h: No such file". So the server and headers are checked here first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${ORMAH_SHARED_DIR:-$root/../shared}
if [ ! -x "$shared/scripts/install-postgres-pgvector.sh" ]; then
  echo "pg-install: $shared/scripts/install-postgres-pgvector.sh not found (set ORMAH_SHARED_DIR)" >&2
  exit 1
fi
have_server=$(ls /usr/lib/postgresql/*/bin/postgres 2>/dev/null | head -1 || true)
pg_config=$(ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -1 || true)
headers=""
[ -n "$pg_config" ] && headers="$("$pg_config" --includedir-server)/postgres.h"
if [ -z "$have_server" ] || [ -z "$headers" ] || [ ! -f "$headers" ] || ! command -v gcc >/dev/null; then
  apt-get update -qq
  major=$(apt-cache policy postgresql | awk '/Candidate/{print $2}' | cut -d+ -f1)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql "postgresql-server-dev-$major" build-essential >/dev/null
fi
"$shared/scripts/install-postgres-pgvector.sh"
