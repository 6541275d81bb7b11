import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { RequestTally, TalliedHistogram } from "./tally";

/** What only the running service knows, read each time /metrics is scraped (the composition root supplies it). */
export interface ScrapeSources {
  /** Unfinished jobs (pending or running) of each queue, and how long the oldest has waited since it was enqueued. */
  jobQueues(): Promise<{ queue: string; depth: number; oldestAgeSeconds: number }[]>;
  /** Streams followed live (Server-Sent Events) right now. */
  sseOpen(): number;
  /** The database's and its write-ahead log's size, in bytes (no log of its own on PostgreSQL: null). */
  files(): Promise<{ database: number; wal: number | null }>;
  /** A full disk (db/disk-space.ts): whether writes are refused now, spells so far, room left (null on PostgreSQL). */
  storage(): { full: boolean; spells: number; roomBytes: number | null };
}

interface Child {
  inc(): void;
}

/**
 * Every metric the service exposes at GET /metrics (README: Metrics), in one prom-client registry
 * per service (tests run several in one process). The features count their background events
 * here (deps.metrics); the hot path's counts are tallies (tally.ts) read at scrape time.
 */
export class Metrics {
  readonly registry = new Registry();
  /** Requests by method, route pattern and status; counted by the boundary's observer. */
  readonly requests = new RequestTally();
  readonly appendSeconds = new TalliedHistogram(
    "notestream_append_duration_seconds",
    "Time from an append's arrival to its answer (fsync included with NOTESTREAM_SYNCHRONOUS=FULL).",
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    this.registry,
  );
  readonly batchWrites = new TalliedHistogram(
    "notestream_commit_batch_writes",
    "Writes committed together in one transaction (group commit).",
    [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    this.registry,
  );
  readonly fsyncSeconds = new TalliedHistogram(
    "notestream_wal_fsync_duration_seconds",
    "Time one fdatasync of the write-ahead log took (NOTESTREAM_SYNCHRONOUS=FULL only).",
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    this.registry,
  );
  readonly webhookDeliveries = this.outcomes(
    "notestream_webhook_deliveries_total",
    "Outbound webhook attempts by outcome: delivered, retry (failed, tried again later), failed (given up).",
    ["delivered", "retry", "failed"],
  );
  readonly webhooksDisabled = this.counter("notestream_webhooks_disabled_total", "Webhooks disabled after consecutive failures or a 410 Gone.");
  readonly inboxPayloads = this.outcomes(
    "notestream_inbox_payloads_total",
    "Inbox payloads processed, by outcome: delivered (a line), retry, dead (dead-lettered).",
    ["delivered", "retry", "dead"],
  );
  readonly deadmanAlerts = this.counter("notestream_deadman_alerts_total", "Dead-man alerts raised (a stream went quiet past its interval; one mail each).");
  readonly fullStreamAlerts = this.counter(
    "notestream_full_stream_alerts_total",
    "Full-stream alerts raised (a stream under retention reject refused an append for its size; one mail a spell).",
  );
  readonly mails = this.outcomes(
    "notestream_mails_total",
    "Mail send attempts by outcome: sent, failed (each failed attempt; retried until its attempts run out).",
    ["sent", "failed"],
  );
  /**
   * MCP requests on the hosted endpoint by the protocol revision they speak, which tells an
   * operator what their clients use (README: AI clients). Revisions this server knows; "other"
   * for the rest, so a client cannot add series at will.
   */
  readonly mcpRequests = new Counter({
    name: "notestream_mcp_requests_total",
    help: "Hosted MCP requests (POST /mcp) by the protocol revision they speak: 2026-07-28, 2025-11-25, an earlier one, or other.",
    labelNames: ["revision"],
    registers: [this.registry],
  });
  /** Set by the composition root once the service runs; null, the scrape-time gauges have no series. */
  sources: ScrapeSources | null = null;
  private defaults = false;

  constructor() {
    const tally = this.requests;
    new Counter({
      name: "notestream_http_requests_total",
      help: "HTTP requests answered, by method, route pattern (never the raw path) and status.",
      labelNames: ["method", "route", "status"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { value, ...labels } of tally.series()) this.inc(labels, value);
      },
    });
    const sources = () => this.sources;
    this.gauge("notestream_job_queue_depth", "Unfinished jobs (pending or running) by queue.", ["queue"], async (g) => {
      for (const q of (await sources()?.jobQueues()) ?? []) g.set({ queue: q.queue }, q.depth);
    });
    this.gauge("notestream_job_queue_oldest_age_seconds", "Age of the oldest unfinished job by queue (0 when none).", ["queue"], async (g) => {
      for (const q of (await sources()?.jobQueues()) ?? []) g.set({ queue: q.queue }, q.oldestAgeSeconds);
    });
    this.gauge("notestream_sse_streams_open", "Streams followed live (Server-Sent Events) right now.", [], (g) => {
      const s = sources();
      if (s) g.set(s.sseOpen());
    });
    this.gauge("notestream_database_bytes", "Size of the database: SQLite's file, or PostgreSQL's pg_database_size.", [], async (g) => {
      const s = sources();
      if (s) g.set((await s.files()).database);
    });
    this.gauge("notestream_storage_full", "1 while writes are refused with 507 storage_full for a full disk (deletes and purges still run), else 0.", [], (g) => {
      const s = sources();
      if (s) g.set(s.storage().full ? 1 : 0);
    });
    new Counter({
      name: "notestream_storage_full_spells_total",
      help: "Times writes began to be refused for a full disk.",
      registers: [this.registry],
      collect() {
        this.reset();
        const s = sources();
        if (s) this.inc(s.storage().spells);
      },
    });
    this.gauge(
      "notestream_storage_room_bytes",
      "Bytes writes may still take: free disk space beyond the reserve plus SQLite's free pages (no series on PostgreSQL).",
      [],
      (g) => {
        const room = sources()?.storage().roomBytes;
        if (room != null) g.set(room);
        else g.remove({});
      },
    );
    this.gauge("notestream_wal_bytes", "Size of the SQLite write-ahead log file (no series on PostgreSQL, whose log is the server's).", [], async (g) => {
      const wal = (await sources()?.files())?.wal;
      // No reading (PostgreSQL): no sample, rather than the 0 an unlabelled gauge shows after reset().
      if (wal != null) g.set(wal);
      else g.remove({});
    });
  }

  /** Adds prom-client's process metrics (CPU, memory, file descriptors, event-loop lag); once, when the endpoint is on. */
  enableDefaultMetrics(): void {
    if (this.defaults) return;
    this.defaults = true;
    collectDefaultMetrics({ register: this.registry });
  }

  /** The exposition, in Prometheus text format 0.0.4. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private counter(name: string, help: string): Counter {
    return new Counter({ name, help, registers: [this.registry] });
  }

  /** A counter with one `outcome` label, its children made once (every outcome shows, at 0, from the start). */
  private outcomes<O extends string>(name: string, help: string, outcomes: readonly O[]): Record<O, Child> {
    const counter = new Counter({ name, help, labelNames: ["outcome"], registers: [this.registry] });
    return Object.fromEntries(
      outcomes.map((o) => {
        const child = counter.labels(o);
        child.inc(0);
        return [o, child];
      }),
    ) as Record<O, Child>;
  }

  /** `fill` may be async (a query): prom-client awaits a collect that returns a promise. */
  private gauge(name: string, help: string, labelNames: string[], fill: (g: Gauge) => void | Promise<void>): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        return fill(this);
      },
    });
  }
}
