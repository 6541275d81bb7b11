# notestream: `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

BUN_VERSION := 1.4.5
# Use bun from PATH when there is one; otherwise install it from npm into .tools/.
BUN := $(shell command -v bun 2>/dev/null || echo $(CURDIR)/.tools/node_modules/.bin/bun)
export PATH := $(dir $(BUN)):$(PATH)

# The commands themselves are package.json's scripts (bun run test, …); the targets add the set-up.
.PHONY: help run test check build bench migration migration-pg clean install image test-image packages mcp-conformance

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk -F':.*?## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(CURDIR)/.tools/node_modules/.bin/bun:
	@echo "bun not found on PATH: installing bun@$(BUN_VERSION) from npm into .tools/"
	npm install --prefix $(CURDIR)/.tools --no-save --no-audit --no-fund bun@$(BUN_VERSION)

node_modules/.installed: package.json bun.lock | $(BUN)
	$(BUN) install --frozen-lockfile
	@touch $@

install: node_modules/.installed ## Install bun (if missing) and the dependencies

run: install ## Start the service (SQLite under ./data, port 8080)
	$(BUN) src/main.ts serve

test: install ## Run the test suite (installs Debian's chromium and postgresql-15 for their tests when missing)
	$(BUN) run test

check: install ## Type-check
	$(BUN) run check

packages: install ## Write the npm packages and the Python wheel to dist/packages/ (notestream-client, notestream, the wheel)
	$(BUN) run packages

build: install ## Build the single executable dist/notestream
	$(BUN) run build

bench: build ## Measure appends, webhooks, memory and start-up against this machine's limits (wrk)
	@command -v wrk >/dev/null || { echo "wrk not found: installing it from Debian's packages"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk; else sudo apt-get install -y wrk; fi; }
	$(BUN) run bench

mcp-conformance: install ## Run the MCP conformance suite and the MCP Inspector's CLI against the service (npm; about a minute; not in make test)
	bash scripts/mcp-conformance.sh

migration: install ## Generate a migration from the schema: make migration name=add_x
	@test -n "$(name)" || { echo "usage: make migration name=<what_changed>"; exit 2; }
	$(BUN) x drizzle-kit generate --name $(name)
	$(BUN) scripts/embed-migrations.ts

migration-pg: install ## The same for PostgreSQL (src/db/pg/schema → migrations-pg/): make migration-pg name=add_x
	@test -n "$(name)" || { echo "usage: make migration-pg name=<what_changed>"; exit 2; }
	$(BUN) x drizzle-kit generate --config drizzle.pg.config.ts --name $(name)
	$(BUN) scripts/embed-migrations.ts

# The container engine for `make image`: docker when its daemon answers, else podman.
CONTAINER_ENGINE ?= $(shell if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then echo docker; \
  elif command -v podman >/dev/null 2>&1; then echo podman; fi)
IMAGE_NAME ?= localhost/notestream:latest

image: ## Build the container image (docker or podman; IMAGE_NAME=…, BUILD_ARGS="--build-arg RUNTIME_BASE=…")
	@test -n "$(CONTAINER_ENGINE)" || { echo "make image: neither a running docker nor podman found"; exit 1; }
	$(CONTAINER_ENGINE) build $(if $(filter podman,$(CONTAINER_ENGINE)),--format docker) \
	  --build-arg BUN_VERSION=$(BUN_VERSION) $(BUILD_ARGS) -t $(IMAGE_NAME) .

test-image: ## Build the image with podman from locally made bases and run it (root; minutes; not in make test)
	bash scripts/test-image.sh

clean: ## Remove build output and installed tools
	rm -rf dist .tools node_modules
