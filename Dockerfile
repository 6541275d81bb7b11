# notestream container image: `docker build .` or `podman build --format docker .` (or `make image`).
#
# Two stages: a build stage that installs Bun from npm and compiles the single executable exactly
# as `make build` does (package.json's "build" script), and a runtime stage that holds that
# executable alone on a slim glibc base, run as a non-root user with its data in the /data volume.
#
# Both bases are build arguments, so a registry mirror or a locally built base can stand in:
#   docker build --build-arg BUILD_BASE=mirror.example/library/node:22-bookworm-slim \
#                --build-arg RUNTIME_BASE=mirror.example/library/debian:bookworm-slim .
# The build base needs node and npm (npm installs Bun) and glibc no newer than the runtime base's;
# the runtime base needs glibc and bash (the health check uses bash's /dev/tcp).
# (No `# syntax=` line on purpose: it would make BuildKit pull a frontend image from a registry.)

ARG BUILD_BASE=docker.io/library/node:22-bookworm-slim
ARG RUNTIME_BASE=docker.io/library/debian:bookworm-slim

# ---------------------------------------------------------------------------------------------
FROM ${BUILD_BASE} AS build

# Keep in step with BUN_VERSION in the Makefile (`make image` passes it; scripts/test-image.sh
# checks that the two agree).
ARG BUN_VERSION=1.4.5
RUN npm install --global --no-audit --no-fund --no-update-notifier "bun@${BUN_VERSION}" \
 && bun --version

WORKDIR /src
# Dependencies first, so an edit under src/ reuses this layer. Only the runtime dependencies:
# the bundler needs nothing from devDependencies (types, test tools, drizzle-kit).
COPY package.json bun.lock bunfig.toml tsconfig.json ./
RUN bun install --frozen-lockfile --production

# The migrations are embedded into the executable (src/db/migrations.generated.ts imports them).
COPY migrations ./migrations
COPY src ./src
RUN bun run build \
 && ./dist/notestream --version

# ---------------------------------------------------------------------------------------------
FROM ${RUNTIME_BASE}

ARG NOTESTREAM_UID=10001
# A system user and group of its own; /data belongs to it, so a named volume mounted there starts
# out writable (docker and podman copy the image's ownership into a new, empty volume).
RUN groupadd --system --gid "${NOTESTREAM_UID}" notestream \
 && useradd --system --uid "${NOTESTREAM_UID}" --gid notestream --home-dir /data --no-create-home \
      --shell /usr/sbin/nologin notestream \
 && mkdir -p /data \
 && chown notestream:notestream /data \
 && chmod 0750 /data

COPY --from=build /src/dist/notestream /usr/local/bin/notestream

ENV NOTESTREAM_DATA_DIR=/data \
    NOTESTREAM_HOST=0.0.0.0 \
    NOTESTREAM_PORT=8080

VOLUME ["/data"]
EXPOSE 8080
WORKDIR /data
USER ${NOTESTREAM_UID}:${NOTESTREAM_UID}

# The image has no curl or wget, and the binary has no health-check command: bash (part of every
# Debian base, slim included) opens the TCP connection itself through /dev/tcp, sends a plain
# HTTP/1.1 GET /up and checks the status line. Nothing is added to the image for it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${NOTESTREAM_PORT:-8080} && printf 'GET /up HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && IFS= read -r -t 4 status <&3 && [[ $status == 'HTTP/1.1 200'* ]]"]

# SIGTERM (docker stop, podman stop) makes the server stop accepting, finish in-flight requests
# and their commits, and exit 0. The binary is PID 1 and handles it itself.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/notestream"]
CMD ["serve"]

LABEL org.opencontainers.image.title="notestream" \
      org.opencontainers.image.description="Self-hostable note-stream service: append a line per event over HTTP"
