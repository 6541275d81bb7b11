#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for the tests. Prints its URL on stdout (nothing else goes there), so
#   export NOTESTREAM_TEST_DATABASE_URL="$(bash scripts/ensure-postgres.sh)"
# is how `make test` hands it to bun test; test/helpers/postgres.ts runs this script itself when
# the variable is not set at all.
#
#   scripts/ensure-postgres.sh          start the cluster (or reuse the running one) and print its URL
#   scripts/ensure-postgres.sh stop     stop it and delete its files
#   scripts/ensure-postgres.sh start --durable, stop --durable
#                                       the same for the benchmark's cluster (below)
#   scripts/ensure-postgres.sh start --tls, stop --tls
#                                       the same for the TLS tests' cluster (below)
#
# Given NOTESTREAM_TEST_DATABASE_URL, that server is used and nothing is started. Otherwise one
# cluster per machine user lives in /dev/shm/notestream-test-pg-<uid> (${TMPDIR:-/tmp}/… where
# /dev/shm is no tmpfs with 2 GB free): initdb'd with trust auth, listening on 127.0.0.1 on a free
# port and on a socket in that directory, without fsync (its data is thrown away). It keeps
# running after the tests, so the next run starts in milliseconds instead of seconds. Debian's
# postgresql-15 is installed with apt when missing and we are root; the server refuses to run as
# root, so then it runs as the package's `postgres` user. When no server can be had this says why
# on stderr, prints nothing and exits 0: the tests that need PostgreSQL skip, as the browser tests
# do without Chromium.
#
# Why in memory: the tests make and drop a database for nearly every test, each a copy of about
# a thousand files. On a filesystem without a journal (ext4 on the CI's VMs) the kernel picks an
# inode for a new file by skipping every inode deleted in the last half minute, so with databases
# dropped all the time each CREATE DATABASE spent twenty times the CPU it spends on tmpfs: most of
# what the PostgreSQL pass took beyond the SQLite pass.
#
# --durable is the cluster `make bench` measures (bench/run.ts): a server that syncs like a real
# one (fsync, synchronous_commit and full_page_writes on, initdb's files synced, PostgreSQL's
# default shared_buffers), otherwise made the same way, in its own directory
# ${TMPDIR:-/tmp}/notestream-bench-pg-<uid> on its own port, so it never meets the tests' cluster.
# NOTESTREAM_BENCH_DATABASE_URL names another server to measure instead (reached without TLS;
# the benchmark creates and drops databases of its own there, so the URL's role must be allowed to).
#
# --tls is the test cluster with TLS on (test/e2e/postgres-tls.test.ts), in its own directory
# ${TMPDIR:-/tmp}/notestream-tls-pg-<uid>: a CA made for it signs the server's certificate, which
# names the host `localhost` only (not 127.0.0.1, so a test can connect by a name it does not
# hold); the CA's certificate is <dir>/ca.pem. It takes plain connections as well, but the role
# notestream_cert only over TLS with a client certificate the same CA signed (pg_hba's `cert`):
# <dir>/client.pem and <dir>/client.key.
set -u

ACTION=start
DURABLE=
TLS=
for arg in "$@"; do
  case $arg in
    start | stop) ACTION=$arg ;;
    --durable) DURABLE=1 ;;
    --tls) TLS=1 ;;
    *)
      echo "ensure-postgres: usage: $0 [start|stop] [--durable|--tls]" >&2
      exit 2
      ;;
  esac
done

PGBIN=${NOTESTREAM_PG_BIN:-/usr/lib/postgresql/15/bin}

# /dev/shm when it is a tmpfs we may write with 2 GB free (the cluster, its WAL and a test file's
# databases take a few hundred MB at most).
in_memory() {
  [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || return 1
  [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -ge 2097152 ] 2>/dev/null || return 1
  echo /dev/shm
}
if [ -n "$DURABLE" ]; then
  STATE=${NOTESTREAM_BENCH_PG_DIR:-${TMPDIR:-/tmp}/notestream-bench-pg-$(id -u)}
  GIVEN_URL=${NOTESTREAM_BENCH_DATABASE_URL:-}
  WHO="the PostgreSQL bench rows"
elif [ -n "$TLS" ]; then
  STATE=${NOTESTREAM_TLS_PG_DIR:-${TMPDIR:-/tmp}/notestream-tls-pg-$(id -u)}
  GIVEN_URL=
  WHO="the PostgreSQL TLS tests"
else
  STATE=${NOTESTREAM_TEST_PG_DIR:-$(in_memory || echo "${TMPDIR:-/tmp}")/notestream-test-pg-$(id -u)}
  GIVEN_URL=${NOTESTREAM_TEST_DATABASE_URL:-}
  WHO="the PostgreSQL tests"
fi
DATA=$STATE/data

warn() { echo "ensure-postgres: $*" >&2; }
unavailable() {
  warn "$*: $WHO will be skipped"
  exit 0
}

if [ "$ACTION" = "start" ] && [ -n "$GIVEN_URL" ]; then
  echo "$GIVEN_URL"
  exit 0
fi

# Runs a PostgreSQL program as the user that owns the cluster. The lock's descriptor is closed
# for it: the server would otherwise inherit it and hold the lock for as long as it runs.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@" 9>&-; else "$@" 9>&-; fi
}

# Two test runs starting at once must not both initdb into the same directory.
exec 9>"$STATE.lock" || unavailable "cannot write $STATE.lock"
flock -w 120 9 || unavailable "another run holds $STATE.lock"

# Stops the cluster's server, by its pid file when pg_ctl cannot (its files gone, another PGBIN).
stop_server() {
  [ -f "$DATA/postmaster.pid" ] || return 0
  as_owner "$PGBIN/pg_ctl" -D "$DATA" -m immediate stop >/dev/null 2>&1 && return 0
  pid=$(head -n 1 "$DATA/postmaster.pid")
  [ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
}

if [ "$ACTION" = "stop" ]; then
  stop_server
  rm -rf "$STATE"
  exit 0
fi

# Installs a Debian package ($1) when we are root with apt (why: $2); says so, or why not.
apt_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 0
  warn "$2: installing Debian's $1"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null ||
    unavailable "apt-get install $1 failed"
}

if [ ! -x "$PGBIN/postgres" ]; then
  apt_install postgresql-15 "PostgreSQL 15 not found"
  [ -x "$PGBIN/postgres" ] || unavailable "no PostgreSQL 15 at $PGBIN (make test installs Debian's postgresql-15 as root)"
fi
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || unavailable "running as root, but there is no postgres user to run the server as"
  command -v runuser >/dev/null 2>&1 || unavailable "running as root without runuser to drop to the postgres user"
fi

# The running cluster of an earlier run, if it still answers.
if [ -f "$STATE/url" ] && [ -f "$DATA/postmaster.pid" ]; then
  url=$(cat "$STATE/url")
  for _ in $(seq 1 50); do
    if "$PGBIN/pg_isready" -q -d "$url" -t 1; then
      echo "$url"
      exit 0
    fi
    # Still starting (pg_ctl status succeeds) is worth waiting for; a dead one is made again.
    as_owner "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1 || break
    sleep 0.1
  done
  stop_server
fi

rm -rf "$STATE"
mkdir -m 700 -p "$STATE" || unavailable "cannot create $STATE"
[ "$(id -u)" = 0 ] && chown postgres: "$STATE"
if [ -n "$TLS" ]; then
  command -v openssl >/dev/null 2>&1 || apt_install openssl "openssl not found (it makes the TLS tests' certificates)"
  command -v openssl >/dev/null 2>&1 || unavailable "no openssl to make a certificate with"
  (
    set -e
    cd "$STATE"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 -subj "/CN=notestream test CA" -keyout ca.key -out ca.pem
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr
    printf 'subjectAltName=DNS:localhost\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 -extfile server.ext -out server.pem
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=notestream_cert" -keyout client.key -out client.csr
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 -out client.pem
    chmod 600 server.key client.key
    if [ "$(id -u)" = 0 ]; then chown postgres: server.key server.pem; fi
  ) >"$STATE/openssl.log" 2>&1 || unavailable "openssl failed: $(tail -n 3 "$STATE/openssl.log" | tr '\n' ' ')"
fi
log=$STATE/initdb.log
nosync=--no-sync
[ -n "$DURABLE" ] && nosync=
as_owner "$PGBIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C $nosync >"$log" 2>&1 ||
  unavailable "initdb failed: $(tail -n 3 "$log" | tr '\n' ' ')"
# Nothing listening beyond loopback, the socket in our own directory (Debian's /var/run/postgresql
# may be missing or someone else's). The tests' server keeps no data: no fsync, enough
# connections for the test files' pools, and at most 256 MB of WAL between checkpoints, since its
# files may be in memory. The bench's syncs every commit as a production server
# does (PostgreSQL's defaults, written out so that nothing else decides them).
if [ -n "$DURABLE" ]; then
  settings="fsync = on
synchronous_commit = on
full_page_writes = on
max_connections = 100
shared_buffers = 128MB"
else
  settings="fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
shared_buffers = 32MB
max_wal_size = 256MB"
fi
if [ -n "$TLS" ]; then
  settings="$settings
ssl = on
ssl_cert_file = '$STATE/server.pem'
ssl_key_file = '$STATE/server.key'
ssl_ca_file = '$STATE/ca.pem'"
  # First match wins: notestream_cert gets in only with its certificate.
  as_owner sh -c "printf 'hostssl all notestream_cert 127.0.0.1/32 cert\nhostnossl all notestream_cert 127.0.0.1/32 reject\n' | cat - '$DATA/pg_hba.conf' >'$DATA/pg_hba.new' && mv '$DATA/pg_hba.new' '$DATA/pg_hba.conf'"
fi
as_owner tee -a "$DATA/postgresql.conf" >/dev/null <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$STATE'
$settings
log_min_messages = warning
EOF

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for _ in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 30000))
  port_free "$port" || continue
  if as_owner "$PGBIN/pg_ctl" -D "$DATA" -l "$STATE/server.log" -o "-p $port" -w -t 30 start >/dev/null 2>&1; then
    # The port goes into the configuration too, so a plain pg_ctl start would reuse it.
    echo "port = $port" | as_owner tee -a "$DATA/postgresql.conf" >/dev/null
    url="postgres://postgres@127.0.0.1:$port/postgres"
    if [ -n "$TLS" ]; then
      as_owner "$PGBIN/psql" -q -h "$STATE" -p "$port" -U postgres -d postgres -c "CREATE ROLE notestream_cert LOGIN SUPERUSER" >/dev/null 2>&1 ||
        unavailable "could not create the role notestream_cert"
    fi
    echo "$url" >"$STATE/url"
    warn "started a throwaway ${DURABLE:+durable }PostgreSQL${TLS:+ with TLS} at $url ($0 stop${DURABLE:+ --durable}${TLS:+ --tls} ends it)"
    echo "$url"
    exit 0
  fi
done
unavailable "the server did not start: $(tail -n 3 "$STATE/server.log" 2>/dev/null | tr '\n' ' ')"
