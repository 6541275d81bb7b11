#!/usr/bin/env bash
# make test-image: builds the container image with podman and runs it like a self-hoster would.
#
# No registry image is pulled: the base images are made here (debootstrap from Debian's packages,
# then `podman import`), and the Dockerfile's BUILD_BASE and RUNTIME_BASE build arguments point at
# them. Then the image is built from a copy of the checkout as a clean clone would have it
# (tracked and new files, nothing .gitignore'd), started, and checked: /up/deep answers 200, an
# account and a token made with the binary inside the container work over HTTP, an appended line
# survives a restart of the container and a new container on the same volume, SIGTERM stops it
# cleanly (exit 0), it runs as its own non-root user, and the image's HEALTHCHECK passes.
# Then deploy/notestream.service: `systemd-analyze verify`, and a real systemd booted in a
# container runs it (confinement, notestream-admin, restart after a crash, clean stop).
#
# Re-runnable: the base images are kept and reused (NOTESTREAM_IMAGE_TEST_REBUILD_BASES=1 makes
# them anew); the test container and its volume are removed before and after each run.
#
# Needs root (debootstrap, rootful podman). Installs Debian's podman, runc and debootstrap when
# missing. Settings (environment):
#   NOTESTREAM_PODMAN_FLAGS   podman's global flags; default suits these machines:
#                             --runtime runc --cgroup-manager cgroupfs --storage-driver vfs
#                             --root /var/lib/notestream-image-test/storage
#                             --runroot /run/notestream-image-test
#   NOTESTREAM_IMAGE_TEST_PORT       host port for the container (default 18080)
#   NOTESTREAM_IMAGE_TEST_NETWORK    podman's --network for build and run (default: podman's own)
#   NOTESTREAM_DEBIAN_MIRROR         debootstrap's mirror (default http://deb.debian.org/debian)
#   NOTESTREAM_IMAGE_TEST_REBUILD_BASES=1   make the base images anew
#   NOTESTREAM_IMAGE_TEST_EXTRA_CA   folder of *.crt added to the build base for HTTPS through a
#                                    proxy with its own CA (default /usr/local/share/ca-certificates;
#                                    `none` for no extra CA)
#   NOTESTREAM_IMAGE_TEST_SYSTEMD=0  skip the systemd part
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Its own storage (--root, --runroot), so that podman's default store, whatever its driver, is
# neither used nor touched (podman refuses to open a store with another driver than it was made with).
PODMAN_FLAGS=${NOTESTREAM_PODMAN_FLAGS---runtime runc --cgroup-manager cgroupfs --storage-driver vfs --root /var/lib/notestream-image-test/storage --runroot /run/notestream-image-test}
PORT=${NOTESTREAM_IMAGE_TEST_PORT:-18080}
NETWORK=${NOTESTREAM_IMAGE_TEST_NETWORK:-}
MIRROR=${NOTESTREAM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
MINBASE=localhost/debian-bookworm-minbase:latest
BUILDBASE=localhost/notestream-build-base:bookworm
IMAGE=localhost/notestream:test
NAME=notestream-imagetest
SD_IMAGE=localhost/notestream-systemd-test:latest
SD_NAME=notestream-systemd-test
VOLUME=notestream-imagetest-data
URL="http://127.0.0.1:${PORT}"
EMAIL=imagetest@example.com
STREAM=imagetest.log
BUILD_LOG=/var/tmp/notestream-image-test.build.log

passed=0
failed=0
t_start=$(date +%s.%N)
WORK=$(mktemp -d /var/tmp/notestream-image-test.XXXXXX)

elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'; }
log() { printf '%s\n' "$*" >&2; }
ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$*"; }
fail() {
  failed=$((failed + 1))
  printf 'FAIL  %s\n' "$*"
  if pm container exists "$SD_NAME" 2>/dev/null; then
    log "--- journal of notestream.service in $SD_NAME (last 40 lines) ---"
    pm exec "$SD_NAME" journalctl -u notestream --no-pager -n 40 >&2 || true
  elif pm container exists "$NAME" 2>/dev/null; then
    log "--- podman logs $NAME (last 40 lines) ---"
    pm logs --tail 40 "$NAME" >&2 || true
  fi
  finish
}
finish() {
  # vfs copies every layer whole: drop the layers no tagged image uses any more (this storage only).
  pm image prune --force >/dev/null 2>&1 || true
  printf '\nimage test: %s in all\n' "$(elapsed "$t_start")"
  printf '%d passed, %d failed\n' "$passed" "$failed"
  [ "$failed" -eq 0 ] && exit 0 || exit 1
}

# Podman as these machines need it: runc, cgroupfs, vfs storage and no default ulimits (the
# default_ulimits of Debian's podman ask for more open files than a sandbox may grant).
if [ -z "${CONTAINERS_CONF:-}" ]; then
  export CONTAINERS_CONF="$WORK/containers.conf"
  cat >"$CONTAINERS_CONF" <<'EOF'
[containers]
default_ulimits = []

[engine]
events_logger = "file"
EOF
fi
# shellcheck disable=SC2086
# Without systemd, podman logs an error each time it would set up a health-check timer; the
# checks still run on demand (podman healthcheck run), so those lines are only noise here.
pm() { podman $PODMAN_FLAGS "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }
net_flag=()
[ -n "$NETWORK" ] && net_flag=(--network "$NETWORK")

cleanup() {
  pm rm --force --ignore --time 5 "$NAME" "$SD_NAME" >/dev/null 2>&1 || true
  pm volume rm --force "$VOLUME" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---- tools ------------------------------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
  echo "scripts/test-image.sh needs root (debootstrap and rootful podman); run it with sudo" >&2
  exit 2
fi
missing=()
for tool in podman runc debootstrap curl; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian's ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
log "podman $(podman --version | awk '{print $3}'), flags: $PODMAN_FLAGS"

# The Dockerfile's default Bun must be the Makefile's.
make_bun=$(sed -n 's/^BUN_VERSION := *//p' Makefile)
file_bun=$(sed -n 's/^ARG BUN_VERSION=//p' Dockerfile)
if [ -n "$make_bun" ] && [ "$make_bun" = "$file_bun" ]; then
  ok "Dockerfile's BUN_VERSION ($file_bun) is the Makefile's"
else
  fail "Dockerfile's BUN_VERSION ($file_bun) differs from the Makefile's ($make_bun)"
fi

cleanup_leftovers() {
  pm rm --force --ignore --time 5 "$NAME" "$SD_NAME" >/dev/null 2>&1 || true
  pm volume rm --force "$VOLUME" >/dev/null 2>&1 || true
}
cleanup_leftovers

# ---- base images, made here -------------------------------------------------------------------
if [ "${NOTESTREAM_IMAGE_TEST_REBUILD_BASES:-}" = 1 ]; then
  pm rmi --force "$BUILDBASE" "$MINBASE" >/dev/null 2>&1 || true
fi
t=$(date +%s.%N)
if ! pm image exists "$MINBASE"; then
  log "making $MINBASE: debootstrap --variant=minbase bookworm (a minute or two)"
  rootfs="$WORK/rootfs"
  if ! debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
    tail -20 "$WORK/debootstrap.log" >&2
    fail "debootstrap --variant=minbase bookworm"
  fi
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | pm import --quiet --change 'CMD ["/bin/bash"]' - "$MINBASE" >/dev/null \
    || fail "podman import of the debootstrap'd bookworm"
  rm -rf "$rootfs"
  ok "runtime base $MINBASE made with debootstrap + podman import ($(elapsed "$t"))"
else
  ok "runtime base $MINBASE already here (reused)"
fi
t=$(date +%s.%N)
if ! pm image exists "$BUILDBASE"; then
  # The build stage needs node and npm: Debian's own, installed into the minbase.
  log "making $BUILDBASE: the minbase with Debian's nodejs and npm"
  # Where HTTPS goes through a proxy with a CA of its own (as on these machines), the host's
  # locally added CAs (/usr/local/share/ca-certificates) go into this local base too, and
  # NODE_EXTRA_CA_CERTS makes npm and bun trust them; the Dockerfile itself stays as it is, which
  # is the point of a locally built base. NOTESTREAM_IMAGE_TEST_EXTRA_CA=none leaves them out.
  mkdir -p "$WORK/buildbase/ca"
  extra_ca=${NOTESTREAM_IMAGE_TEST_EXTRA_CA:-/usr/local/share/ca-certificates}
  if [ "$extra_ca" != none ] && [ -d "$extra_ca" ]; then
    find "$extra_ca" -maxdepth 1 -name '*.crt' -exec cp {} "$WORK/buildbase/ca/" \;
  fi
  log "  extra CAs for the build base: $(ls "$WORK/buildbase/ca" | paste -sd ' ' | sed 's/^$/none/')"
  cat >"$WORK/buildbase/Containerfile" <<EOF
FROM $MINBASE
RUN apt-get update -qq \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm ca-certificates >/dev/null \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \\
 && node --version && npm --version
COPY ca/ /usr/local/share/ca-certificates/
RUN update-ca-certificates >/dev/null
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
EOF
  pm build "${net_flag[@]}" --format docker -t "$BUILDBASE" "$WORK/buildbase" >"$WORK/buildbase.log" 2>&1 \
    || { tail -30 "$WORK/buildbase.log" >&2; fail "build base $BUILDBASE (Debian's nodejs + npm)"; }
  ok "build base $BUILDBASE made: Debian's node $(pm run --rm "$BUILDBASE" node --version) ($(elapsed "$t"))"
else
  ok "build base $BUILDBASE already here (reused)"
fi

# ---- the image, from a clean copy of the checkout ---------------------------------------------
ctx="$WORK/context"
mkdir -p "$ctx"
git ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done \
  | tar --null -T - -c | tar -x -C "$ctx"
t=$(date +%s.%N)
log "building $IMAGE (podman build --format docker, from a copy of the checkout without ignored files)"
if pm build "${net_flag[@]}" --format docker \
    --build-arg "BUILD_BASE=$BUILDBASE" --build-arg "RUNTIME_BASE=$MINBASE" \
    --build-arg "BUN_VERSION=$make_bun" \
    -t "$IMAGE" "$ctx" >"$BUILD_LOG" 2>&1; then
  ok "image $IMAGE built ($(elapsed "$t"); log: $BUILD_LOG)"
else
  tail -40 "$BUILD_LOG" >&2
  fail "podman build (log above)"
fi
rm -rf "$ctx"

size=$(pm image inspect --format '{{.Size}}' "$IMAGE") || fail "podman image inspect"
base_size=$(pm image inspect --format '{{.Size}}' "$MINBASE") || fail "podman image inspect"
printf '      image size %s MB (runtime base %s MB, so %s MB added)\n' \
  $((size / 1000000)) $((base_size / 1000000)) $(((size - base_size) / 1000000))

cfg=$(pm image inspect --format '{{.Config.User}}|{{json .Config.Volumes}}|{{json .Config.ExposedPorts}}|{{json .Config.Env}}|{{json .Config.Healthcheck}}' "$IMAGE")
IFS='|' read -r c_user c_vol c_ports c_env c_hc <<<"$cfg"
[ "$c_user" = "10001:10001" ] || fail "image user is '$c_user', not 10001:10001"
[[ $c_vol == *'"/data"'* ]] || fail "image declares no /data volume ($c_vol)"
[[ $c_ports == *'"8080/tcp"'* ]] || fail "image exposes no 8080/tcp ($c_ports)"
[[ $c_env == *'NOTESTREAM_DATA_DIR=/data'* ]] || fail "image lacks NOTESTREAM_DATA_DIR=/data ($c_env)"
[[ $c_hc == *'/dev/tcp/127.0.0.1/${NOTESTREAM_PORT:-8080}'* ]] || fail "image has no HEALTHCHECK on /up ($c_hc)"
ok "image config: user 10001:10001, volume /data, port 8080/tcp, NOTESTREAM_DATA_DIR=/data, HEALTHCHECK"

version=$(pm run --rm "${net_flag[@]}" "$IMAGE" --version) || fail "notestream --version in the image"
pkg_version=$(sed -n 's/^  "version": "\(.*\)",/\1/p' package.json)
[ "$version" = "$pkg_version" ] || fail "the image's notestream --version says '$version', package.json '$pkg_version'"
ok "notestream --version in the image: $version"

# ---- run it -----------------------------------------------------------------------------------
run_container() {
  if [ "$NETWORK" = host ]; then
    pm run -d --name "$NAME" --network host -e "NOTESTREAM_PORT=$PORT" -v "$VOLUME:/data" "$IMAGE" >/dev/null
  else
    pm run -d --name "$NAME" "${net_flag[@]}" -p "127.0.0.1:$PORT:8080" -v "$VOLUME:/data" "$IMAGE" >/dev/null
  fi
}
# /up until it answers (at most 60 s), then /up/deep once the scheduler has beaten.
wait_ready() {
  local t0 deep
  t0=$(date +%s.%N)
  for _ in $(seq 1 240); do
    curl -fsS --max-time 2 "$URL/up" >/dev/null 2>&1 && break
    sleep 0.25
  done
  curl -fsS --max-time 2 "$URL/up" >/dev/null 2>&1 || return 1
  for _ in $(seq 1 20); do
    deep=$(curl -sS --max-time 5 -o "$WORK/deep.json" -w '%{http_code}' "$URL/up/deep" 2>/dev/null) || deep=000
    [ "$deep" = 200 ] && { READY_IN=$(elapsed "$t0"); return 0; }
    sleep 1
  done
  return 1
}
api() { curl -sS --max-time 10 -H "Authorization: Bearer $TOKEN" "$@"; }
read_stream() { api "$URL/api/v1/notes/by-filename/$STREAM"; }

t=$(date +%s.%N)
run_container || fail "podman run $IMAGE"
wait_ready || fail "the container answers /up/deep with 200"
ok "container started; GET /up/deep 200 after $READY_IN: $(tr -d '\n' <"$WORK/deep.json" | cut -c1-120)"

uid=$(pm exec "$NAME" id -u) || fail "podman exec id -u"
[ "$uid" = 10001 ] || fail "the service runs as uid $uid"
ok "the service runs as uid 10001 (notestream), not root"

hc_t=$(date +%s.%N)
if pm healthcheck run "$NAME" >/dev/null 2>&1; then
  ok "podman healthcheck run: healthy ($(elapsed "$hc_t"))"
else
  fail "podman healthcheck run: the image's HEALTHCHECK fails"
fi
# And it can fail: the same command against a port where nothing listens.
hc_cmd=$(pm image inspect --format '{{index .Config.Healthcheck.Test 3}}' "$IMAGE") || fail "reading the HEALTHCHECK"
if pm exec -e NOTESTREAM_PORT=1 "$NAME" bash -c "$hc_cmd" >/dev/null 2>&1; then
  fail "the HEALTHCHECK command passes against a port where nothing listens"
fi
ok "the HEALTHCHECK command fails where nothing answers (NOTESTREAM_PORT=1)"

pm exec "$NAME" notestream account create --email "$EMAIL" --plan dev >/dev/null 2>"$WORK/cli.err" \
  || { cat "$WORK/cli.err" >&2; fail "podman exec notestream account create"; }
TOKEN=$(pm exec "$NAME" notestream token create --email "$EMAIL" --scope read,write,append --name imagetest 2>"$WORK/cli.err") \
  || { cat "$WORK/cli.err" >&2; fail "podman exec notestream token create"; }
[[ $TOKEN == nst_* ]] || fail "token create printed '$TOKEN'"
ok "account and token made with podman exec … notestream account create / token create"

line1="image test line one $(date -u +%FT%TZ)"
code=$(api -o "$WORK/append.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
  -d "{\"text\": \"$line1\"}" "$URL/api/v1/notes/by-filename/$STREAM/append")
[ "$code" = 201 ] || { cat "$WORK/append.json" >&2; fail "first append answered $code, not 201"; }
read_stream | grep -qF "$line1" || fail "the appended line is not read back"
ok "append with the token: 201, read back"

# ---- restart: SIGTERM, then start again on the same volume ------------------------------------
t=$(date +%s.%N)
pm stop --time 30 "$NAME" >/dev/null || fail "podman stop"
stop_took=$(elapsed "$t")
exit_code=$(pm inspect --format '{{.State.ExitCode}}' "$NAME") || fail "podman inspect"
[ "$exit_code" = 0 ] || fail "after podman stop (SIGTERM) the service exited $exit_code, not 0"
ok "podman stop: SIGTERM, the service exited 0 in $stop_took"
pm start "$NAME" >/dev/null || fail "podman start after the stop"
wait_ready || fail "after the restart the container answers /up/deep with 200"
read_stream | grep -qF "$line1" || fail "after the restart the line is gone (or the token)"
ok "restarted: /up/deep 200 after $READY_IN, the token works and the line is still there"
line2="image test line two $(date -u +%FT%TZ)"
code=$(api -o "$WORK/append.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
  -d "{\"text\": \"$line2\"}" "$URL/api/v1/notes/by-filename/$STREAM/append")
[ "$code" = 200 ] || { cat "$WORK/append.json" >&2; fail "append after the restart answered $code, not 200"; }

# ---- a new container on the same volume (what an upgrade does) ---------------------------------
pm stop --time 30 "$NAME" >/dev/null && pm rm "$NAME" >/dev/null || fail "podman stop + rm"
run_container || fail "podman run of a new container on the volume"
wait_ready || fail "the new container answers /up/deep with 200"
body=$(read_stream)
grep -qF "$line1" <<<"$body" && grep -qF "$line2" <<<"$body" \
  || fail "the new container does not read back both lines: $body"
ok "new container on the same volume: both lines read back"
owner=$(pm exec "$NAME" stat -c '%n %u:%g %a' /data /data/notestream.db | paste -sd ' ') || fail "podman exec stat"
ok "volume contents owned by the service's user: $owner"

printf '      run phase %s\n' "$(elapsed "$t")"
pm stop --time 30 "$NAME" >/dev/null 2>&1 || true

# ---- the systemd unit -------------------------------------------------------------------------
# deploy/notestream.service, unchanged, run by a real systemd booted in a container (minbase plus
# Debian's systemd), with the binary of the image above, the sysusers file, the example settings
# and notestream-admin installed as docs/SELF-HOSTING.md says.
# NOTESTREAM_IMAGE_TEST_SYSTEMD=0 skips this part.
if [ "${NOTESTREAM_IMAGE_TEST_SYSTEMD:-1}" != 0 ]; then
  t=$(date +%s.%N)
  sd="$WORK/systemd"
  mkdir -p "$sd"
  cid=$(pm create "$IMAGE") || fail "podman create (to copy the binary out)"
  pm cp "$cid:/usr/local/bin/notestream" "$sd/notestream" >/dev/null || fail "podman cp of the binary"
  pm rm --volumes "$cid" >/dev/null
  cp deploy/notestream.service deploy/notestream.sysusers deploy/notestream.env deploy/notestream-admin "$sd/"

  if command -v systemd-analyze >/dev/null; then
    # verify checks that ExecStart= exists: a copy points it at the binary just copied out.
    mkdir -p "$sd/verify"
    sed "s#^ExecStart=/usr/local/bin/notestream#ExecStart=$sd/notestream#" deploy/notestream.service \
      >"$sd/verify/notestream.service"
    if verify_out=$(cd "$sd/verify" && systemd-analyze verify ./notestream.service 2>&1) && [ -z "$verify_out" ]; then
      ok "systemd-analyze verify deploy/notestream.service: clean (no output, exit 0)"
    else
      printf '%s\n' "$verify_out" >&2
      fail "systemd-analyze verify deploy/notestream.service"
    fi
    exposure=$(cd "$sd/verify" && systemd-analyze security --offline=true ./notestream.service 2>/dev/null | tail -1 | sed 's/^→ //') || true
    [ -n "$exposure" ] && printf '      systemd-analyze security: %s\n' "$exposure"
  fi

  cat >"$sd/Containerfile" <<EOF
FROM $MINBASE
RUN apt-get update -qq \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd systemd-sysv curl >/dev/null \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
COPY notestream /usr/local/bin/notestream
COPY notestream-admin /usr/local/sbin/notestream-admin
COPY notestream.sysusers /etc/sysusers.d/notestream.conf
COPY notestream.env /etc/notestream/notestream.env
COPY notestream.service /etc/systemd/system/notestream.service
RUN chmod 0600 /etc/notestream/notestream.env && systemd-sysusers && systemctl enable notestream.service
CMD ["/lib/systemd/systemd"]
EOF
  pm build "${net_flag[@]}" --format docker -t "$SD_IMAGE" "$sd" >"$WORK/sd-build.log" 2>&1 \
    || { tail -30 "$WORK/sd-build.log" >&2; fail "building the systemd test image"; }
  # systemd needs to mount (namespaces for PrivateTmp, ProtectSystem, ...): a privileged container.
  pm run -d --name "$SD_NAME" --privileged --systemd=always "$SD_IMAGE" >/dev/null || fail "booting systemd in a container"
  sx() { pm exec "$SD_NAME" bash -c "$1"; }
  state=starting
  for _ in $(seq 1 60); do
    state=$(sx 'systemctl is-system-running' 2>/dev/null) || true
    [[ $state == running || $state == degraded ]] && break
    sleep 0.5
  done
  ok "systemd booted in a container ($state) with deploy/notestream.service enabled ($(elapsed "$t"))"

  sd_ready() {
    for _ in $(seq 1 60); do
      [ "$(sx 'curl -s -o /dev/null -w %{http_code} --max-time 2 http://127.0.0.1:8080/up/deep' 2>/dev/null)" = 200 ] && return 0
      sleep 0.5
    done
    return 1
  }
  sd_ready || { sx 'systemctl status notestream --no-pager; journalctl -u notestream --no-pager | tail -20' >&2; fail "the unit's service answers /up/deep with 200"; }
  pid1=$(sx 'systemctl show -p MainPID --value notestream')
  status=$(sx "grep -E '^(Uid|NoNewPrivs|Seccomp|CapEff|CapBnd):' /proc/$pid1/status | tr -s '\t ' ' ' | paste -sd ';'")
  svc_uid=$(sx 'id -u notestream')
  [[ $status == *"Uid: $svc_uid $svc_uid"* && $status == *"NoNewPrivs: 1"* && $status == *"Seccomp: 2"* \
     && $status == *"CapEff: 0000000000000000"* && $status == *"CapBnd: 0000000000000000"* ]] \
    || fail "the service's process is not confined as the unit says: $status"
  mounts=$(sx "awk '\$5 == \"/\" || \$5 == \"/var/lib/notestream\" { print \$5 \" \" substr(\$6, 1, 2) }' /proc/$pid1/mountinfo | paste -sd ';'")
  [[ $mounts == *"/ ro"* && $mounts == *"/var/lib/notestream rw"* ]] \
    || fail "ProtectSystem=strict: the service should see / read-only and only its state directory writable: $mounts"
  ok "active as user notestream (uid $svc_uid), NoNewPrivileges, seccomp filter on, no capabilities, / read-only and only /var/lib/notestream writable; /up/deep 200"

  SD_TOKEN=$(sx 'notestream-admin account create --email sd@example.com --plan dev >/dev/null && notestream-admin token create --email sd@example.com --scope read,write,append' 2>"$WORK/cli.err") \
    || { cat "$WORK/cli.err" >&2; fail "notestream-admin account create / token create"; }
  [[ $SD_TOKEN == nst_* ]] || fail "notestream-admin token create printed '$SD_TOKEN'"
  sd_append() { sx "curl -s -o /dev/null -w %{http_code} -X POST -H 'Authorization: Bearer $SD_TOKEN' -H 'Content-Type: application/json' -d '{\"text\": \"$1\"}' http://127.0.0.1:8080/api/v1/notes/by-filename/systemd.log/append"; }
  sd_read() { sx "curl -s -H 'Authorization: Bearer $SD_TOKEN' http://127.0.0.1:8080/api/v1/notes/by-filename/systemd.log"; }
  [ "$(sd_append 'under systemd')" = 201 ] || fail "append under systemd"
  sd_read | grep -qF 'under systemd' || fail "read back under systemd"
  modes=$(sx 'stat -c "%n %U %a" /var/lib/notestream /var/lib/notestream/notestream.db | paste -sd " "')
  ok "notestream-admin made an account and a token; append 201 and read back; $modes"

  # Restart=on-failure: a crash (SIGKILL) brings it back.
  sx "kill -KILL $pid1"
  sleep 3
  sd_ready || fail "Restart=on-failure: the service is not back after SIGKILL"
  pid2=$(sx 'systemctl show -p MainPID --value notestream')
  [ "$pid2" != "$pid1" ] && [ "$pid2" != 0 ] || fail "Restart=on-failure: no new process"
  sd_read | grep -qF 'under systemd' || fail "the line is gone after the crash"
  ok "SIGKILL'd: restarted by Restart=on-failure (pid $pid1 → $pid2), the line still there"

  t2=$(date +%s.%N)
  sx 'systemctl stop notestream' || fail "systemctl stop"
  stop_took=$(elapsed "$t2")
  result=$(sx 'systemctl show -p Result -p ExecMainStatus -p ActiveState notestream | paste -sd " "')
  [[ $result == *"Result=success"* && $result == *"ExecMainStatus=0"* && $result == *"ActiveState=inactive"* ]] \
    || fail "systemctl stop did not end cleanly: $result"
  ok "systemctl stop: SIGTERM, exit 0 in $stop_took ($result)"
  pm rm --force --time 5 "$SD_NAME" >/dev/null 2>&1 || true
  printf '      systemd phase %s\n' "$(elapsed "$t")"
fi
finish
