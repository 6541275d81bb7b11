import { describe, expect, test } from "bun:test";
import { inboxLine, MAX_LINE_CHARS, summarise } from "../../src/modules/inbox/summarise";

// Issue 18's senders, in their own file because summarise.test.ts is already long. Fixtures follow
// each service's documented example bodies, trimmed of fields the summary never reads.

const enc = (s: string) => new TextEncoder().encode(s);
const TS = "2026-11-22T10:00:00.000Z";
const sum = (body: unknown, headers: Record<string, string> = {}) =>
  summarise("application/json", { "content-type": "application/json", ...headers }, enc(JSON.stringify(body)));

function expectCleanLine(s: string) {
  expect(s).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
  expect(s).toBe(s.trim());
  expect(s).not.toMatch(/\s{2,}/);
}

const amAlert = (name: string, status: string, severity: string, instance: string) => ({
  status,
  labels: { alertname: name, instance, job: "node", severity },
  annotations: { summary: `${name} on ${instance}` },
  startsAt: "2026-11-22T09:50:00.000Z",
  endsAt: status === "resolved" ? "2026-11-22T09:58:00.000Z" : "0001-01-01T00:00:00Z",
  generatorURL: "http://prometheus.example.com:9090/graph?g0.expr=up+%3D%3D+0",
  fingerprint: "5d2a3c9b8e7f6a10",
});
const alertmanagerGroup = (alerts: unknown[], truncatedAlerts = 0) => ({
  version: "4",
  groupKey: "{}:{job=\"node\"}",
  truncatedAlerts,
  status: "firing",
  receiver: "notestream",
  groupLabels: { job: "node" },
  commonLabels: { job: "node" },
  commonAnnotations: {},
  externalURL: "http://alertmanager.example.com:9093",
  alerts,
});

describe("Alertmanager groups", () => {
  test("every alert is listed with its name, severity and instance, with firing/resolved counts", () => {
    const body = alertmanagerGroup([amAlert("InstanceDown", "firing", "critical", "db-1:9100"), amAlert("DiskFull", "firing", "warning", "db-2:9100"), amAlert("HighLoad", "resolved", "info", "web-1:9100")]);
    expect(sum(body)).toBe(
      "Alertmanager FIRING 3 alerts (2 firing, 1 resolved): InstanceDown (critical, db-1:9100), DiskFull (warning, db-2:9100), HighLoad (info, web-1:9100, resolved)",
    );
  });

  test("a long instance is left out; alerts that do not fit the line become +N more", () => {
    const many = Array.from({ length: 200 }, (_, i) => amAlert(`Alert${i}`, "firing", "critical", `host-${i}.example.com:9100`));
    many[0] = amAlert("Alert0", "firing", "critical", "x".repeat(200));
    const s = sum(alertmanagerGroup(many, 5));
    expect(s).toStartWith("Alertmanager FIRING 205 alerts (200 firing): Alert0 (critical), Alert1 (critical, host-1.example.com:9100),");
    const more = Number(/ \+(\d+) more$/.exec(s)?.[1]);
    const listed = s.split("), ").length;
    expect(listed + more).toBe(205); // truncatedAlerts count as not listed
    const line = inboxLine(TS, s);
    expect(line).toBe(`${TS} ${s}`); // fits without being cut
    expect([...line].length).toBeLessThanOrEqual(MAX_LINE_CHARS);
    expect([...line].length).toBeGreaterThan(MAX_LINE_CHARS - 60);
    expectCleanLine(s);
  });
});

// grafana.com/docs/grafana/latest/alerting/configure-notifications/manage-contact-points/integrations/webhook-notifier/
const grafanaUnified = {
  receiver: "notestream",
  status: "firing",
  orgId: 1,
  alerts: [
    {
      status: "firing",
      labels: { alertname: "High CPU", grafana_folder: "Servers", instance: "web-1", severity: "warning" },
      annotations: { summary: "CPU above 90%" },
      startsAt: "2026-11-22T09:55:00Z",
      endsAt: "0001-01-01T00:00:00Z",
      generatorURL: "https://grafana.example.com/alerting/grafana/abc/view?orgId=1",
      fingerprint: "57c6d9296de2ad39",
      silenceURL: "https://grafana.example.com/alerting/silence/new",
      dashboardURL: "",
      panelURL: "",
      values: { B: 95.2, C: 1 },
      valueString: "[ var='B' labels={instance=web-1} value=95.2 ]",
    },
  ],
  groupLabels: { alertname: "High CPU", grafana_folder: "Servers" },
  commonLabels: { alertname: "High CPU", grafana_folder: "Servers", instance: "web-1", severity: "warning" },
  commonAnnotations: { summary: "CPU above 90%" },
  externalURL: "https://grafana.example.com/",
  version: "1",
  groupKey: '{}/{}:{alertname="High CPU", grafana_folder="Servers"}',
  truncatedAlerts: 0,
  title: "[FIRING:1] High CPU Servers (web-1 warning)",
  state: "alerting",
  message: "**Firing**\n\nValue: B=95.2\nLabels:\n - alertname = High CPU\n",
};

describe("Grafana", () => {
  test("unified alerting is Grafana, not Alertmanager, and shows each alert's value", () => {
    expect(sum(grafanaUnified, { "user-agent": "Grafana" })).toBe(
      "Grafana FIRING 1 alert (1 firing) - CPU above 90%: High CPU (warning, web-1, [ var='B' labels={instance=web-1} value=95.2 ])",
    );
  });

  test("legacy alerting reads the rule name, state and message", () => {
    const legacy = { dashboardId: 1, evalMatches: [{ value: 100, metric: "High value", tags: null }], message: "Someone is testing\nthe alert", orgId: 1, panelId: 2, ruleId: 0, ruleName: "Load peaking!", ruleUrl: "http://grafana.example.com/d/abc", state: "alerting", tags: { severity: "high" }, title: "[Alerting] Load peaking!" };
    expect(sum(legacy)).toBe("Grafana alerting: Load peaking! - Someone is testing the alert");
  });
});

describe("Uptime Kuma", () => {
  const kuma = (status: number, msg: string) => ({
    heartbeat: { monitorID: 3, status, time: "2026-11-22 09:59:58.123", msg, important: true, duration: 60, timezone: "Europe/Paris", localDateTime: "2026-11-22 10:59:58" },
    monitor: { id: 3, name: "Main site", url: "https://example.com", hostname: null, port: null, type: "http", interval: 60 },
    msg: `[Main site] [${status === 0 ? "🔴 Down" : "✅ Up"}] ${msg}`,
  });
  test("a heartbeat names the status, monitor and message", () => {
    expect(sum(kuma(0, "connect ECONNREFUSED 10.0.0.5:443"))).toBe("Uptime Kuma DOWN: Main site - connect ECONNREFUSED 10.0.0.5:443");
    expect(sum(kuma(1, "200 - OK"))).toBe("Uptime Kuma UP: Main site - 200 - OK");
  });
  test("the test notification (no heartbeat) reads its msg", () => {
    expect(sum({ heartbeat: null, monitor: null, msg: "Main site Testing" })).toBe("Uptime Kuma: Main site Testing");
  });
});

// Gitea and Forgejo also send X-GitHub-Event, so their own header must win.
const giteaRepo = { id: 1, owner: { id: 1, login: "alice", username: "alice" }, name: "notes", full_name: "alice/notes", html_url: "https://git.example.com/alice/notes", default_branch: "main" };
const giteaUser = { id: 1, login: "alice", username: "alice", full_name: "Alice", email: "alice@example.com" };
const giteaPush = {
  ref: "refs/heads/main",
  before: "28e1879d029cb852e4844d9c718537df08844e03",
  after: "bffeb74224043ba2feb48d137756c8a9331c449a",
  compare_url: "https://git.example.com/alice/notes/compare/28e1879d...bffeb742",
  commits: [{ id: "bffeb74224043ba2feb48d137756c8a9331c449a", message: "Fix the sync loop\n\nlong body", url: "https://git.example.com/alice/notes/commit/bffeb742", author: { name: "Alice", email: "alice@example.com", username: "alice" } }],
  total_commits: 1,
  head_commit: { id: "bffeb74224043ba2feb48d137756c8a9331c449a", message: "Fix the sync loop\n\nlong body" },
  repository: giteaRepo,
  pusher: giteaUser,
  sender: giteaUser,
};
const giteaPr = { action: "opened", number: 7, pull_request: { id: 9, number: 7, title: "Add dark mode", state: "open", user: giteaUser }, repository: giteaRepo, sender: giteaUser };

describe("Gitea and Forgejo", () => {
  test("a Gitea push names the forge, repository, branch, pusher and head commit", () => {
    expect(sum(giteaPush, { "x-gitea-event": "push", "x-github-event": "push" })).toBe('Gitea push to alice/notes main by alice: 1 commit, "Fix the sync loop"');
  });
  test("a Forgejo pull request", () => {
    expect(sum(giteaPr, { "x-forgejo-event": "pull_request", "x-gitea-event": "pull_request", "x-github-event": "pull_request" })).toBe("Forgejo pull_request opened on alice/notes: #7 Add dark mode");
  });
});

describe("healthchecks.io", () => {
  test("the $JSON check body reads name and status", () => {
    const check = { name: "Nightly backup", slug: "nightly-backup", tags: "prod db", desc: "", grace: 3600, n_pings: 12, status: "down", started: false, last_ping: "2026-11-21T02:00:11+00:00", next_ping: null, manual_resume: false, methods: "", timeout: 86400 };
    expect(sum(check)).toBe("healthchecks.io: Nightly backup is DOWN (last ping 2026-11-21T02:00:11+00:00)");
  });
  test('the "$NAME is $STATUS" text is kept as it is', () => {
    expect(summarise("text/plain", { "content-type": "text/plain" }, enc("Nightly backup is down\n"))).toBe("Nightly backup is down");
  });
});

describe("Prometheus-style generic alerts", () => {
  const alert = { labels: { alertname: "DiskFull", severity: "warning", instance: "db-1" }, annotations: { summary: "disk at 95%" }, startsAt: "2026-11-22T09:50:00Z", generatorURL: "http://prometheus:9090/graph" };
  test("a bare list of alerts (the Alertmanager API's body) is summarised", () => {
    expect(sum([alert, { ...alert, labels: { alertname: "InstanceDown", severity: "critical" } }])).toBe("Alerts 2 alerts: DiskFull (warning, db-1), InstanceDown (critical)");
  });
  test('{"alerts": [...]} without Alertmanager\'s group fields', () => {
    expect(sum({ alerts: [{ ...alert, status: "resolved" }] })).toBe("Alerts 1 alert (1 resolved): DiskFull (warning, db-1, resolved)");
  });
});

describe("Docker Hub", () => {
  test("a push names the repository, tag and pusher", () => {
    const hub = {
      callback_url: "https://registry.hub.docker.com/u/svendowideit/testhook/hook/2141b5bi5i5b02bec211i4eeih0242eg11000a/",
      push_data: { pushed_at: 1417566161, pusher: "trustedbuilder", tag: "latest" },
      repository: { comment_count: 0, date_created: 1417494799, description: "", dockerfile: "#\n# BUILD\n", is_official: false, is_private: true, is_trusted: true, name: "testhook", namespace: "svendowideit", owner: "svendowideit", repo_name: "svendowideit/testhook", repo_url: "https://registry.hub.docker.com/u/svendowideit/testhook/", star_count: 0, status: "Active" },
    };
    expect(sum(hub)).toBe("Docker Hub push to svendowideit/testhook:latest by trustedbuilder");
  });
});
