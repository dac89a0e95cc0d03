#!/usr/bin/env bash
# Start a throwaway PostgreSQL cluster on 127.0.0.1 for the test suite's second pass.
# Installs Debian's postgresql when absent (needs root). Prints the SQLAlchemy URL of the
# server's admin database on stdout; stop it with: scripts/postgres-test-server.sh stop
# The test server runs with fsync=off; WORKBENCH_PG_FSYNC=on (with another WORKBENCH_PG_PORT)
# starts one that commits durably, as the load benchmark needs.
set -euo pipefail
PORT=${WORKBENCH_PG_PORT:-55432}
FSYNC=${WORKBENCH_PG_FSYNC:-off}
# The test server's files live in memory (/dev/shm) where it can: the suite creates and drops a
# database per test, each about 1,000 files, which took 0.45 s on the
# 2-core machine's disk (ext4) and 0.03 s in memory (tmpfs).
# A durable server (fsync on, for the load benchmark) keeps its files on disk, and so does
# any server where /dev/shm has less than 2 GiB free (a container's is often 64 MiB).
SHM_FREE_KIB=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }' || true)
if [ "$FSYNC" = off ] && [ -d /dev/shm ] && [ -w /dev/shm ] \
  && [ "${SHM_FREE_KIB:-0}" -ge $((2 * 1024 * 1024)) ]; then
  DATA=${WORKBENCH_PG_DATA:-/dev/shm/workbench-pg-$PORT}
else
  DATA=${WORKBENCH_PG_DATA:-/tmp/workbench-pg-$PORT}
fi

pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && echo "$dir"
}

if [ "${1:-start}" = stop ]; then  # the server on $PORT, in memory or on disk
  bin=$(pg_bin) || exit 0
  for dir in "$DATA" "/dev/shm/workbench-pg-$PORT" "/tmp/workbench-pg-$PORT"; do
    [ -f "$dir/postmaster.pid" ] && su postgres -c "$bin/pg_ctl -D $dir -m fast stop" >/dev/null 2>&1 || true
  done
  exit 0
fi

if [ -z "$(pg_bin)" ]; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi
bin=$(pg_bin)
if [ ! -f "$DATA/PG_VERSION" ]; then
  rm -rf "$DATA" && mkdir -p "$DATA" && chown postgres:postgres "$DATA"
  su postgres -c "$bin/initdb -D $DATA -A trust -U postgres --no-sync" >/dev/null
fi
if ! su postgres -c "$bin/pg_ctl -D $DATA status" >/dev/null 2>&1; then
  su postgres -c "$bin/pg_ctl -D $DATA -l $DATA/server.log -w start -o '-p $PORT -k /tmp -c listen_addresses=127.0.0.1 -c fsync=$FSYNC -c max_connections=200'" >/dev/null
fi
echo "postgresql+psycopg://postgres@127.0.0.1:$PORT/postgres"
