#!/usr/bin/env bun
import { ConfigError, loadConfig, serverAccess } from "./config";
import {
  accountCreate,
  accountLapse,
  accountSetPlan,
  accountShow,
  accountTrial,
  billingBind,
  billingCheckout,
  tokenList,
  tokenRevoke,
  oauthList,
  oauthRevoke,
  isUserError, teamAdd, teamCreate, teamRemove, tokenCreate, type Output } from "./cli/commands";
import { UsageError } from "./cli/args";
import { backup, restore } from "./cli/backup";
import { openSqliteDeps, openDeps } from "./runtime";
import type { Deps } from "./deps";
import { PostgresUnavailableError } from "./db/pg/client";
import { appendCommand, catCommand, ClientError, lsCommand, tailCommand } from "./cli/client";
import { runCommand } from "./cli/run";
import { ackCommand, pauseCommand, quietCommand } from "./cli/watch";
import { serve, StartupError } from "./server";
import { SchemaTooNewError } from "./db/migrate";
import pkg from "../package.json";
import { PLAN_NAMES } from "./limits/plans";

const HELP = `notestream ${pkg.version}: append-only note streams and editable notes over HTTP

Usage:
  notestream [serve]                      start the HTTP service (default)
  notestream migrate                      apply database migrations and exit
  notestream backup FILE                  a consistent copy of the database, while the service runs
  notestream restore FILE                 put a backup in place (the service stopped; the old database is kept aside)
  notestream account create --email E --plan ${PLAN_NAMES.join("|")} [--password P] [--name N]
  notestream account trial --email E [--team ID]          start the 14-day API trial
  notestream account set-plan --email E --plan P [--team ID]   subscribe / change plan (no billing provider)
  notestream account lapse --email E [--team ID]          make the account read-only (as a lapsed subscription)
  notestream account show --email E [--team ID]           plan and state as JSON
  notestream billing checkout --email E --plan P [--team ID]   print a Lemon Squeezy checkout link for the workspace
  notestream billing bind --email E --subscription ID --variant ID [--customer ID] [--team ID]
                                                          bind a subscription created before checkouts were bound
  notestream team create --owner E --name N
  notestream team add --team ID --email E
  notestream team remove --team ID --email E              take a member off (their team tokens end)
  notestream token create --email E --scope read,write,append [--team ID] [--note ID]
                          [--expires-in-days N] [--name N]
  notestream token create --email E --extension --note ID   the browser-extension token (subscribers)
  notestream token list --email E                         id, state, kind, scopes, note, workspace, expiry, name
  notestream token revoke --id ID
  notestream oauth list --email E                         AI clients (MCP) the account allowed: id, name, scopes, last use
  notestream oauth revoke --id ID | --email E --all       end one grant, or every grant of the account
  notestream mcp                          MCP over stdio for AI clients (NOTESTREAM_URL, NOTESTREAM_TOKEN)
  notestream append FILENAME [TEXT…]      append TEXT as a line, or each line of stdin ([--url U] [--token T])
  notestream tail [-n N] [-f] FILENAME    print a stream's newest N lines (default 10); -f follows it
  notestream ls [--kind K] [--folder ID]  list notes: id, kind, bytes, last change, filename or title
  notestream cat FILENAME|ID              print a note's text
  notestream run [--stream F] [--quiet] -- COMMAND [ARGS…]
                                          run a job and record start, ok or FAILED with its status and time
  notestream pause FILENAME|ID            no alert of the stream until its next write
  notestream quiet FILENAME|ID --for 1h | --until TIME | --off
                                          hold the stream's alerts back until then (one alert then if still down)
  notestream ack FILENAME|ID              acknowledge its alert: no more repeats or escalation in this spell
  notestream help | --version

Configuration is read from NOTESTREAM_* environment variables (see README).`;

const io: Output = { out: (l) => console.log(l), info: (l) => console.error(l) };

const COMMANDS: Record<string, (deps: Deps, argv: string[], io: Output) => Promise<void>> = {
  "account create": accountCreate,
  "account trial": accountTrial,
  "account set-plan": accountSetPlan,
  "account lapse": accountLapse,
  "account show": accountShow,
  "billing checkout": billingCheckout,
  "billing bind": billingBind,
  "token list": tokenList,
  "token revoke": tokenRevoke,
  "oauth list": oauthList,
  "oauth revoke": oauthRevoke,
  "team create": teamCreate,
  "team add": teamAdd,
  "team remove": teamRemove,
  "token create": tokenCreate,
};

/** Clients of a running server (NOTESTREAM_URL, NOTESTREAM_TOKEN): no database opened. A Map, so no inherited name matches. */
const CLIENT_COMMANDS = new Map<string, (argv: string[], out: (l: string) => void, info: (l: string) => void) => Promise<void>>([
  ["append", appendCommand],
  ["tail", tailCommand],
  ["ls", lsCommand],
  ["pause", pauseCommand],
  ["quiet", quietCommand],
  ["ack", ackCommand],
]);

async function main(argv: string[]): Promise<number> {
  const [command = "serve", sub] = argv;
  if (command === "help" || command === "--help" || command === "-h") {
    console.log(HELP);
    return 0;
  }
  if (command === "--version" || command === "version") {
    console.log(pkg.version);
    return 0;
  }
  if (command === "mcp") {
    // Talks to a server over HTTP: no database here, and stdout belongs to the protocol. The MCP
    // SDK loads here, not when any other command starts.
    try {
      const { runStdio } = await import("./mcp/stdio");
      await runStdio(serverAccess());
    } catch (e) {
      console.error(`notestream mcp: ${(e as Error).message}`);
      return 1;
    }
    return 0;
  }
  const client = CLIENT_COMMANDS.get(command);
  if (client) {
    await client(argv.slice(1), io.out, io.info);
    return 0;
  }
  if (command === "cat") {
    // Written in full before the process exits, however large (a pipe may take it slowly).
    await catCommand(argv.slice(1), (text) => Bun.write(Bun.stdout, text));
    return 0;
  }
  if (command === "run") return runCommand(argv.slice(1), io.info);
  const config = loadConfig();
  if (config.postgres && command === "migrate") {
    const { migratePostgresCommand } = await import("./cli/pg-migrate");
    await migratePostgresCommand(config.postgres, io);
    return 0;
  }
  if (command === "serve") {
    if (argv.length > 1) throw new UsageError(`serve takes no arguments; configure it with NOTESTREAM_* variables`);
    await serve(await openDeps(config));
    return -1; // keeps running
  }
  if (command === "backup" || command === "restore") {
    if (config.postgres) throw new UsageError(`${command} copies the SQLite database; on PostgreSQL use pg_dump and pg_restore (docs/SCALING.md)`);
    // No openSqliteDeps: a restore must not open (and migrate) the database it replaces.
    await (command === "backup" ? backup : restore)(config, argv.slice(1), io);
    return 0;
  }
  if (command === "migrate") {
    await openSqliteDeps(config).close();
    io.info(`database at ${config.dataDir} is up to date`);
    return 0;
  }
  const run = COMMANDS[`${command} ${sub ?? ""}`];
  if (!run) throw new UsageError(`unknown command "${[command, sub].filter(Boolean).join(" ")}"`);
  const deps = await openDeps(config);
  try {
    await run(deps, argv.slice(2), io);
    await deps.writer.idle();
  } finally {
    await deps.close();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e) => {
    if (e instanceof UsageError || e instanceof ConfigError) {
      console.error(`notestream: ${e.message}\nRun "notestream help" for usage.`);
      process.exit(2);
    }
    if (
      isUserError(e) || e instanceof ClientError || e instanceof SchemaTooNewError || e instanceof StartupError || e instanceof PostgresUnavailableError
    ) {
      console.error(`notestream: ${(e as Error).message}`);
      process.exit(1);
    }
    console.error(e);
    process.exit(1);
  },
);
