#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster (initdb in a temporary folder as the `postgres` user, a free port, trust
# auth on a Unix socket only) and prints its URL on the last line: postgres://postgres@/ormah?host=DIR&port=PORT.
# Stop it with: scripts/pg-cluster.sh stop DIR  (stops the server and removes the folder).
# scripts/pg-cluster.sh run CMD...  starts one, runs CMD with ORMAH_TEST_DATABASE_URL set, stops it, exits as CMD.
# fsync is off: the cluster is thrown away after one run.
# Needs PostgreSQL with pgvector (../shared/scripts/install-postgres-pgvector.sh installs both).
set -euo pipefail
bindir=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -1)")
if [ ! -x "$bindir/pg_ctl" ]; then
  echo "PostgreSQL is not installed (run ../shared/scripts/install-postgres-pgvector.sh as root)" >&2
  exit 1
fi
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ "${1:-}" = stop ]; then
  dir=${2:?usage: pg-cluster.sh stop DIR}
  as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
  rm -rf "$dir"
  exit 0
fi
if [ "${1:-}" = run ]; then
  shift
  url=$("$0" | tail -1)
  dir=${url#*host=}; dir=${dir%%&*}
  rc=0
  ORMAH_TEST_DATABASE_URL=$url "$@" || rc=$?
  "$0" stop "$dir"
  exit $rc
fi
dir=$(mktemp -d /tmp/ormah-pg.XXXXXX)
chmod 755 "$dir"
[ "$(id -u)" = 0 ] && chown postgres "$dir"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
  -o "-c listen_addresses='' -c unix_socket_directories='$dir' -p $port -c fsync=off -c max_connections=200" start >/dev/null
as_pg "$bindir/createdb" -h "$dir" -p "$port" -U postgres ormah
echo "postgres://postgres@/ormah?host=$dir&port=$port"
