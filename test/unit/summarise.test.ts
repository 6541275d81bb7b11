import { describe, expect, test } from "bun:test";
import { inboxLine, MAX_LINE_CHARS, summarise } from "../../src/modules/inbox/summarise";

// Fixtures are shaped like the senders' documented webhook bodies (trimmed of fields the
// summary never reads, but keeping enough of the noise around them to be realistic).

const enc = (s: string) => new TextEncoder().encode(s);
const json = (v: unknown) => enc(JSON.stringify(v));
const TS = "2026-11-22T10:00:00.000Z";

/** Summarises a JSON body sent with these (lower-case) headers, the way the inbox stores them. */
function summariseJson(body: unknown, headers: Record<string, string> = {}, contentType = "application/json") {
  return summarise(contentType, { "content-type": contentType, ...headers }, json(body));
}

/** One line, with no control, format, line- or paragraph-separator characters, trimmed. */
function expectCleanLine(s: string) {
  expect(s).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
  expect(s).toBe(s.trim());
  expect(s).not.toMatch(/\s{2,}/);
  expect(s.length).toBeGreaterThan(0);
}

const githubRepository = {
  id: 1296269,
  node_id: "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
  name: "Hello-World",
  full_name: "octocat/Hello-World",
  private: false,
  owner: { login: "octocat", id: 1, type: "User" },
  html_url: "https://github.com/octocat/Hello-World",
  default_branch: "main",
};
const githubSender = { login: "octocat", id: 1, node_id: "MDQ6VXNlcjE=", type: "User", site_admin: false };

const commit = (id: string, message: string) => ({
  id,
  tree_id: "f9d2a07e9488b91af2641b26b9407fe22a451433",
  distinct: true,
  message,
  timestamp: "2026-11-22T10:59:12+01:00",
  url: `https://github.com/octocat/Hello-World/commit/${id}`,
  author: { name: "Mona Lisa", email: "mona@github.com", username: "monalisa" },
  committer: { name: "GitHub", email: "noreply@github.com", username: "web-flow" },
  added: ["docs/install.md"],
  removed: [],
  modified: ["README.md"],
});

const githubPush = {
  ref: "refs/heads/main",
  before: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
  after: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
  repository: githubRepository,
  pusher: { name: "octocat", email: "octocat@github.com" },
  sender: githubSender,
  created: false,
  deleted: false,
  forced: false,
  base_ref: null,
  compare: "https://github.com/octocat/Hello-World/compare/6113728f27ae...0d1a26e67d8f",
  commits: [
    commit("a10867b14bb761a232cd80139fbd4c0d33264240", "Add an install guide"),
    commit("0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c", "Fix typo in the install guide\r\n\r\nThe command used npm; it is bun.\nCloses #12."),
  ],
  head_commit: commit("0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c", "Fix typo in the install guide\r\n\r\nThe command used npm; it is bun.\nCloses #12."),
};

const githubPullRequestOpened = {
  action: "opened",
  number: 42,
  pull_request: {
    url: "https://api.github.com/repos/octocat/Hello-World/pulls/42",
    id: 1789,
    node_id: "MDExOlB1bGxSZXF1ZXN0MQ==",
    html_url: "https://github.com/octocat/Hello-World/pull/42",
    number: 42,
    state: "open",
    locked: false,
    title: "Add  dark\nmode",
    user: { login: "hubot", id: 2 },
    body: "Adds a dark theme.\n\nCloses #40",
    draft: false,
    merged: false,
    head: { label: "hubot:dark-mode", ref: "dark-mode", sha: "6dcb09b5b57875f334f61aebed695e2e4193db5e" },
    base: { label: "octocat:main", ref: "main", sha: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c" },
  },
  repository: githubRepository,
  sender: { login: "hubot", id: 2, type: "User" },
};

const githubWorkflowRunCompleted = {
  action: "completed",
  workflow_run: {
    id: 30433642,
    name: "CI",
    node_id: "MDEyOldvcmtmbG93IFJ1bjI2OTI4OQ==",
    head_branch: "main",
    head_sha: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
    path: ".github/workflows/ci.yml",
    run_number: 562,
    event: "push",
    status: "completed",
    conclusion: "failure",
    workflow_id: 159038,
    html_url: "https://github.com/octocat/Hello-World/actions/runs/30433642",
    pull_requests: [],
    created_at: "2026-11-22T09:58:02Z",
    updated_at: "2026-11-22T10:03:41Z",
    run_attempt: 1,
  },
  workflow: { id: 159038, name: "CI", path: ".github/workflows/ci.yml", state: "active" },
  repository: githubRepository,
  sender: githubSender,
};

const gitlabProject = {
  id: 15,
  name: "Diaspora",
  description: "",
  web_url: "http://example.com/mike/diaspora",
  git_ssh_url: "git@example.com:mike/diaspora.git",
  git_http_url: "http://example.com/mike/diaspora.git",
  namespace: "Mike",
  visibility_level: 0,
  path_with_namespace: "mike/diaspora",
  default_branch: "master",
};

const gitlabPush = {
  object_kind: "push",
  event_name: "push",
  before: "95790bf891e76fee5e1747ab589903a6a1f80f22",
  after: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
  ref: "refs/heads/master",
  ref_protected: true,
  checkout_sha: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
  user_id: 4,
  user_name: "John Smith",
  user_username: "jsmith",
  user_email: "john@example.com",
  user_avatar: "https://s.gravatar.com/avatar/d4c74594d841139328695756648b6bd6?s=8://s.gravatar.com/avatar/d4c74594d841139328695756648b6bd6?s=80",
  project_id: 15,
  project: gitlabProject,
  repository: {
    name: "Diaspora",
    url: "git@example.com:mike/diaspora.git",
    description: "",
    homepage: "http://example.com/mike/diaspora",
    git_http_url: "http://example.com/mike/diaspora.git",
    git_ssh_url: "git@example.com:mike/diaspora.git",
    visibility_level: 0,
  },
  // GitLab lists at most 20 commits; total_commits_count is the real number.
  commits: [
    {
      id: "b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327",
      message: "Update Catalan translation to e38cb41.\n\nSee https://gitlab.com/gitlab-org/gitlab for more information",
      title: "Update Catalan translation to e38cb41.",
      timestamp: "2011-12-12T14:27:31+02:00",
      url: "http://example.com/mike/diaspora/commit/b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327",
      author: { name: "Jordi Mallach", email: "jordi@softcatala.org" },
      added: ["CHANGELOG"],
      modified: ["app/controller/application.rb"],
      removed: [],
    },
    {
      id: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
      message: "fixed readme",
      title: "fixed readme",
      timestamp: "2012-01-03T23:36:29+02:00",
      url: "http://example.com/mike/diaspora/commit/da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
      author: { name: "GitLab dev user", email: "gitlabdev@dv6700.(none)" },
      added: ["CHANGELOG"],
      modified: ["app/controller/application.rb"],
      removed: [],
    },
  ],
  total_commits_count: 4,
};

const gitlabPipeline = {
  object_kind: "pipeline",
  object_attributes: {
    id: 31,
    iid: 3,
    name: "Pipeline for branch: master",
    ref: "master",
    tag: false,
    sha: "bcbb5ec396a2c0f828686f14fac9b80b780504f2",
    before_sha: "bcbb5ec396a2c0f828686f14fac9b80b780504f2",
    source: "push",
    status: "success",
    detailed_status: "passed",
    stages: ["build", "test", "deploy"],
    created_at: "2016-08-12 15:23:28 UTC",
    finished_at: "2016-08-12 15:26:29 UTC",
    duration: 63,
    queued_duration: 12,
    variables: [{ key: "NESTOR_PROD_ENVIRONMENT", value: "us-west-1" }],
    url: "http://example.com/gitlab-org/gitlab-test/-/pipelines/31",
  },
  user: { id: 1, name: "Administrator", username: "root", email: "user_email@gitlab.com" },
  project: {
    id: 1,
    name: "Gitlab Test",
    description: "Atque in sunt eos similique dolores voluptatem.",
    web_url: "http://192.168.64.1:3005/gitlab-org/gitlab-test",
    namespace: "Gitlab Org",
    visibility_level: 20,
    path_with_namespace: "gitlab-org/gitlab-test",
    default_branch: "master",
  },
  commit: {
    id: "bcbb5ec396a2c0f828686f14fac9b80b780504f2",
    message: "test\n",
    timestamp: "2016-08-12T17:23:21+02:00",
    url: "http://example.com/gitlab-org/gitlab-test/commit/bcbb5ec396a2c0f828686f14fac9b80b780504f2",
    author: { name: "User", email: "user@gitlab.com" },
  },
  builds: [
    { id: 380, stage: "deploy", name: "production", status: "skipped", created_at: "2016-08-12 15:23:28 UTC" },
    { id: 377, stage: "test", name: "test-image", status: "success", created_at: "2016-08-12 15:23:28 UTC" },
  ],
};

function stripeEvent(object: Record<string, unknown>, type = "payment_intent.succeeded") {
  return {
    id: "evt_3MtwBwLkdIwHu7ix0snN8B0M",
    object: "event",
    api_version: "2022-11-15",
    created: 1680064028,
    data: {
      object: {
        id: "pi_3MtwBwLkdIwHu7ix28a3tqPa",
        object: "payment_intent",
        amount: 4200,
        amount_capturable: 0,
        amount_received: 4200,
        capture_method: "automatic",
        currency: "usd",
        customer: null,
        description: null,
        latest_charge: "ch_3MtwBwLkdIwHu7ix28IlHTdN",
        livemode: false,
        metadata: {},
        payment_method: "pm_1MtwBwLkdIwHu7ixdeQ8f6rL",
        payment_method_types: ["card"],
        receipt_email: null,
        status: "succeeded",
        ...object,
      },
    },
    livemode: false,
    pending_webhooks: 1,
    request: { id: "req_Lsg9xkhDjSsL2Q", idempotency_key: "3ff4a3b1-4d3f-4e6c-8ff7-3e8a2d5c9b0e" },
    type,
  };
}

const sentryEventAlert = {
  action: "triggered",
  installation: { uuid: "a8e5d37a-696c-4c54-adb5-b3f28d64c7de" },
  data: {
    event: {
      event_id: "9fac2ceed9344f2bbfdd1fdacb0ed9b1",
      project: 1,
      release: null,
      dist: null,
      platform: "javascript",
      message: "",
      datetime: "2026-11-22T09:59:58.000000Z",
      tags: [
        ["environment", "production"],
        ["level", "error"],
      ],
      level: "error",
      culprit: "app/components/Checkout",
      title: "TypeError: Cannot read properties of undefined (reading 'total')",
      location: "app/components/Checkout.tsx",
      url: "https://sentry.io/api/0/projects/acme/web/events/9fac2ceed9344f2bbfdd1fdacb0ed9b1/",
      web_url: "https://acme.sentry.io/issues/1117540176/events/9fac2ceed9344f2bbfdd1fdacb0ed9b1/",
      issue_url: "https://sentry.io/api/0/issues/1117540176/",
      issue_id: "1117540176",
    },
    triggered_rule: "Notify on new checkout errors",
  },
  actor: { type: "application", id: "sentry", name: "Sentry" },
};

const sentryIssueCreated = {
  action: "created",
  installation: { uuid: "a8e5d37a-696c-4c54-adb5-b3f28d64c7de" },
  data: {
    issue: {
      id: "1170820242",
      shortId: "WEB-1A",
      title: "Error: Payment provider timed out",
      culprit: "checkout/pay",
      level: "error",
      status: "unresolved",
      platform: "javascript",
      project: { id: "1", name: "web", slug: "web", platform: "javascript" },
      url: "https://sentry.io/api/0/issues/1170820242/",
      web_url: "https://acme.sentry.io/issues/1170820242/",
      project_url: "https://acme.sentry.io/issues/?project=1",
      count: "1",
      userCount: 0,
      firstSeen: "2026-11-22T09:59:58.000000Z",
      lastSeen: "2026-11-22T09:59:58.000000Z",
    },
  },
  actor: { type: "application", id: "sentry", name: "Sentry" },
};

const alertmanagerFiring = {
  version: "4",
  groupKey: '{}:{alertname="HighErrorRate"}',
  truncatedAlerts: 0,
  status: "firing",
  receiver: "notestream",
  groupLabels: { alertname: "HighErrorRate" },
  commonLabels: { alertname: "HighErrorRate", job: "api", severity: "critical" },
  commonAnnotations: { summary: "Error rate above 5% for 10 minutes" },
  externalURL: "http://alertmanager.example.com:9093",
  alerts: ["api-1:9090", "api-2:9090"].map((instance, i) => ({
    status: "firing",
    labels: { alertname: "HighErrorRate", instance, job: "api", severity: "critical" },
    annotations: { summary: "Error rate above 5% for 10 minutes", description: `5xx rate on ${instance} is ${7 + i}%` },
    startsAt: "2026-11-22T09:50:00.000Z",
    endsAt: "0001-01-01T00:00:00Z",
    generatorURL: "http://prometheus.example.com:9090/graph?g0.expr=job%3Aerrors%3Arate5m+%3E+0.05",
    fingerprint: i === 0 ? "5d2a3c9b8e7f6a10" : "9b1e4f2d7c6a3b08",
  })),
};

describe("GitHub", () => {
  test("a push names the repository, branch, pusher, commit count and the head commit's first line", () => {
    expect(summariseJson(githubPush, { "x-github-event": "push", "user-agent": "GitHub-Hookshot/3a1b2c" })).toBe(
      'GitHub push to octocat/Hello-World main by octocat: 2 commits, "Fix typo in the install guide"',
    );
  });

  test("a tag push with one commit says 1 commit and the tag name", () => {
    const tagPush = { ...githubPush, ref: "refs/tags/v1.2.0", commits: [commit("c1", "Release v1.2.0")], head_commit: commit("c1", "Release v1.2.0") };
    expect(summariseJson(tagPush, { "x-github-event": "push" })).toBe('GitHub push to octocat/Hello-World v1.2.0 by octocat: 1 commit, "Release v1.2.0"');
  });

  test("a branch deletion (no commits, no head commit) still reads as one line", () => {
    const deletion = { ...githubPush, ref: "refs/heads/feature/old", after: "0".repeat(40), deleted: true, commits: [], head_commit: null };
    expect(summariseJson(deletion, { "x-github-event": "push" })).toBe("GitHub push to octocat/Hello-World feature/old by octocat: 0 commits");
  });

  test("a push sent form-encoded (payload=<json>) reads the same as the JSON one", () => {
    const body = "payload=" + encodeURIComponent(JSON.stringify(githubPush));
    const type = "application/x-www-form-urlencoded";
    expect(summarise(type, { "content-type": type, "x-github-event": "push" }, enc(body))).toBe(
      'GitHub push to octocat/Hello-World main by octocat: 2 commits, "Fix typo in the install guide"',
    );
  });

  test("a pull request opened names the action, repository, number and the title on one line", () => {
    expect(summariseJson(githubPullRequestOpened, { "x-github-event": "pull_request" })).toBe(
      "GitHub pull_request opened on octocat/Hello-World: #42 Add dark mode",
    );
  });

  test("a completed workflow run names the workflow, its conclusion, repository and branch", () => {
    expect(summariseJson(githubWorkflowRunCompleted, { "x-github-event": "workflow_run" })).toBe(
      'GitHub workflow "CI" failure on octocat/Hello-World main',
    );
  });

  test("a push without the event header is still recognised by its shape", () => {
    expect(summariseJson(githubPush)).toBe('GitHub push to octocat/Hello-World main by octocat: 2 commits, "Fix typo in the install guide"');
  });
});

describe("GitLab", () => {
  test("a push names the project, branch, user and total_commits_count (not the truncated commits list)", () => {
    expect(summariseJson(gitlabPush, { "x-gitlab-event": "Push Hook" })).toBe("GitLab push to mike/diaspora master by John Smith: 4 commits");
  });

  test("a pipeline names its status, project and ref", () => {
    expect(summariseJson(gitlabPipeline, { "x-gitlab-event": "Pipeline Hook" })).toBe("GitLab pipeline success on gitlab-org/gitlab-test master");
  });
});

describe("Stripe", () => {
  test("payment_intent.succeeded shows the id, the amount in major units, the currency and the status", () => {
    expect(summariseJson(stripeEvent({}), { "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)" })).toBe(
      "Stripe payment_intent.succeeded pi_3MtwBwLkdIwHu7ix28a3tqPa 42.00 USD succeeded",
    );
  });

  test("a zero-decimal currency (JPY) is not divided by 100; a receipt email is shown", () => {
    expect(summariseJson(stripeEvent({ currency: "jpy", receipt_email: "jenny.rosen@example.com" }))).toBe(
      "Stripe payment_intent.succeeded pi_3MtwBwLkdIwHu7ix28a3tqPa 4200 JPY succeeded jenny.rosen@example.com",
    );
  });

  test("a checkout session reads amount_total and customer_email", () => {
    const session = stripeEvent(
      { id: "cs_test_a1b2c3", object: "checkout.session", amount: undefined, amount_total: 1999, currency: "eur", status: "complete", customer_email: "max@example.com" },
      "checkout.session.completed",
    );
    expect(summariseJson(session)).toBe("Stripe checkout.session.completed cs_test_a1b2c3 19.99 EUR complete max@example.com");
  });

  // Stripe's documented zero-decimal list (docs.stripe.com/currencies) is BIF CLP DJF GNF JPY KMF KRW
  // MGA PYG RWF UGX VND VUV XAF XOF XPF; BHD JOD KWD OMR TND have three decimals.
  // src/modules/inbox/summarise.ts money() knows only 7 zero-decimal codes and no three-decimal
  // ones, so these fail until it is fixed.
  test("every Stripe zero-decimal currency is shown as is (PYG, XPF)", () => {
    expect(summariseJson(stripeEvent({ currency: "pyg", amount: 150000 }))).toBe(
      "Stripe payment_intent.succeeded pi_3MtwBwLkdIwHu7ix28a3tqPa 150000 PYG succeeded",
    );
    expect(summariseJson(stripeEvent({ currency: "xpf", amount: 4200 }))).toBe(
      "Stripe payment_intent.succeeded pi_3MtwBwLkdIwHu7ix28a3tqPa 4200 XPF succeeded",
    );
  });

  test("a three-decimal currency (KWD) is divided by 1000 and shows three decimals", () => {
    expect(summariseJson(stripeEvent({ currency: "kwd", amount: 4200 }))).toBe(
      "Stripe payment_intent.succeeded pi_3MtwBwLkdIwHu7ix28a3tqPa 4.200 KWD succeeded",
    );
  });
});

describe("Sentry", () => {
  test("an issue alert (event_alert) names the action, level, title and the issue's web URL", () => {
    expect(summariseJson(sentryEventAlert, { "sentry-hook-resource": "event_alert" })).toBe(
      "Sentry triggered error TypeError: Cannot read properties of undefined (reading 'total') https://acme.sentry.io/issues/1117540176/events/9fac2ceed9344f2bbfdd1fdacb0ed9b1/",
    );
  });

  test("an issue created event names the project too", () => {
    expect(summariseJson(sentryIssueCreated, { "sentry-hook-resource": "issue" })).toBe(
      "Sentry created error web: Error: Payment provider timed out https://acme.sentry.io/issues/1170820242/",
    );
  });
});

describe("Alertmanager", () => {
  test("a firing group names the status, counts, common summary and every alert with its severity and instance", () => {
    expect(summariseJson(alertmanagerFiring, { "user-agent": "Alertmanager/0.27.0" })).toBe(
      "Alertmanager FIRING 2 alerts (2 firing) - Error rate above 5% for 10 minutes: HighErrorRate (critical, api-1:9090), HighErrorRate (critical, api-2:9090)",
    );
  });

  test("a resolved group with one alert says so", () => {
    const resolved = { ...alertmanagerFiring, status: "resolved", alerts: [{ ...alertmanagerFiring.alerts[0]!, status: "resolved" }] };
    expect(summariseJson(resolved)).toBe(
      "Alertmanager RESOLVED 1 alert (1 resolved) - Error rate above 5% for 10 minutes: HighErrorRate (critical, api-1:9090, resolved)",
    );
  });
});

describe("generic payloads", () => {
  test('{"title","message"} reads "title: message"', () => {
    const s = summariseJson({ title: "Deploy finished", message: "api v2.3.1 is live\non 3 hosts" });
    expect(s).toBe("Deploy finished: api v2.3.1 is live on 3 hosts");
    expectCleanLine(s);
  });

  test('{"text"} reads as the text', () => {
    const s = summariseJson({ text: "Backup of db-1 completed in 42s", username: "cron" });
    expect(s).toBe("Backup of db-1 completed in 42s");
    expectCleanLine(s);
  });

  test("an unknown JSON object falls back to its compact JSON, on one line", () => {
    const s = summariseJson({ level: "warn", msg: "disk at 91%\n", host: "db-1" });
    expect(s).toBe('{"level":"warn","msg":"disk at 91%\\n","host":"db-1"}');
    expectCleanLine(s);
  });
});

describe("text and odd bodies", () => {
  test("plain text loses newlines, tabs, control and bidi/format characters and stays one line", () => {
    const text = "Backup finished\n\tfiles: 12\r\n\u0007bytes: 4096\u202E\u200Bdone\u0000\u2028next\u2066x\u2069\u001b[31m red\u0085end\u000b\u000c";
    const s = summarise("text/plain; charset=utf-8", { "content-type": "text/plain; charset=utf-8" }, enc(text));
    expectCleanLine(s);
    expect(s).toStartWith("Backup finished files: 12 bytes: 4096done next");
    expect(s).toContain("[31m red");
    // Nothing here can fake a second, separately timestamped line.
    expect(inboxLine(TS, s).split("\n")).toHaveLength(1);
  });

  test("a text that tries to forge a second timestamped line stays in one line", () => {
    const s = summarise("text/plain", {}, enc(`ok\n${TS} forged line\r\nmore`));
    expect(inboxLine(TS, s)).toBe(`${TS} ok ${TS} forged line more`);
  });

  test("a form-urlencoded body with a payload field holding JSON is read as that JSON", () => {
    const type = "application/x-www-form-urlencoded";
    const body = new URLSearchParams({ payload: JSON.stringify({ text: "Build #12 passed\non main", channel: "#ci" }) }).toString();
    const s = summarise(type, { "content-type": type }, enc(body));
    expect(s).toBe("Build #12 passed on main");
    expectCleanLine(s);
  });

  test("a form-urlencoded body without JSON is summarised from its fields", () => {
    const type = "application/x-www-form-urlencoded";
    const s = summarise(type, { "content-type": type }, enc("title=Door%20open&message=Back%0Adoor"));
    expect(s).toBe("Door open: Back door");
    expectCleanLine(s);
  });

  test("invalid JSON with a JSON content type falls back to the text, on one line", () => {
    const s = summarise("application/json", { "content-type": "application/json" }, enc('{"title": "oops",\n  "message": '));
    expect(s).toBe('{"title": "oops", "message":');
    expectCleanLine(s);
  });

  test("an empty body (with or without a JSON content type) is '(empty payload)'", () => {
    expect(summarise(null, {}, new Uint8Array())).toBe("(empty payload)");
    expect(summarise("application/json", { "content-type": "application/json" }, new Uint8Array())).toBe("(empty payload)");
    expect(summarise("text/plain", {}, enc(" \n\t\u200B "))).toBe("(empty payload)");
  });

  test("invalid UTF-8 does not throw and yields a clean line", () => {
    const s = summarise("text/plain", {}, new Uint8Array([0x68, 0x69, 0xff, 0xfe, 0x0a, 0xc3]));
    expectCleanLine(s);
    expect(s).toStartWith("hi");
  });
});

describe("deeply nested JSON", () => {
  const deepArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
  /** An object whose `title` sits at the top and whose `x` holds arrays nested to `depth` levels in all. */
  const titled = (depth: number) => `{"title":"Deploy finished","x":${deepArray(depth - 1)}}`;

  test("a 500,000-deep array is not parsed but described in one line, at once", () => {
    const body = deepArray(500_000);
    const t = performance.now();
    const s = summarise("application/json", { "content-type": "application/json" }, enc(body));
    expect(performance.now() - t).toBeLessThan(200);
    expect(s).toBe("JSON payload nested deeper than 64 levels, 1000000 bytes");
    expectCleanLine(s);
  });

  test("without a JSON content type, a body that looks like JSON is judged the same way", () => {
    expect(summarise("text/plain", { "content-type": "text/plain" }, enc(deepArray(100_000)))).toBe(
      "JSON payload nested deeper than 64 levels, 200000 bytes",
    );
    expect(summarise(null, {}, enc("{".repeat(300_000)))).toBe("JSON payload nested deeper than 64 levels, 300000 bytes");
  });

  test("64 levels are still read as JSON; 65 are described instead", () => {
    expect(summariseJson(JSON.parse(titled(64)))).toBe("Deploy finished");
    expect(summarise("application/json", {}, enc(titled(64)))).toBe("Deploy finished");
    expect(summarise("application/json", {}, enc(titled(65)))).toBe(`JSON payload nested deeper than 64 levels, ${titled(65).length} bytes`);
  });

  test("a form field carrying deeply nested JSON is described, not parsed", () => {
    const type = "application/x-www-form-urlencoded";
    const body = new URLSearchParams({ payload: deepArray(200_000) }).toString();
    expect(summarise(type, { "content-type": type }, enc(body))).toBe(`JSON payload nested deeper than 64 levels, ${body.length} bytes`);
  });
});

describe("inboxLine", () => {
  test("is the ISO timestamp, a space and the summary", () => {
    expect(inboxLine(TS, "GitHub push to a/b main by c: 1 commit")).toBe(`${TS} GitHub push to a/b main by c: 1 commit`);
    expect(inboxLine(TS, "a\nb\u202E")).toBe(`${TS} a b`);
  });

  const big: [string, string | null, Uint8Array, Record<string, string>][] = [
    ["50 KB of astral-plane text", "text/plain", enc("🎉 deploy ".repeat(5_000)), {}],
    ["50 KB of CJK with newlines", "text/plain", enc("日本語のテキスト\n".repeat(2_100)), {}],
    ["a 50 KB JSON object with no known shape", "application/json", json({ data: "x".repeat(50_000), more: ["é".repeat(100)] }), {}],
    ["a GitHub push whose head commit has a 50 KB first line", "application/json", json({ ...githubPush, head_commit: commit("c", "🚀".repeat(12_800) + "\nrest") }), { "x-github-event": "push" }],
  ];
  for (const [what, type, body, headers] of big) {
    test(`${what} gives a line of at most ${MAX_LINE_CHARS} characters starting with the timestamp`, () => {
      expect(body.length).toBeGreaterThanOrEqual(50_000);
      const line = inboxLine(TS, summarise(type, { ...(type ? { "content-type": type } : {}), ...headers }, body));
      expect([...line].length).toBeLessThanOrEqual(MAX_LINE_CHARS);
      expect([...line].length).toBe(MAX_LINE_CHARS); // it was cut, not dropped
      expect(line).toStartWith(`${TS} `);
      expect(line.endsWith("…")).toBe(true);
      expectCleanLine(line);
      // Cut on a code point, never inside a surrogate pair.
      expect(line).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    });
  }

  test(`MAX_LINE_CHARS is 1,000`, () => {
    expect(MAX_LINE_CHARS).toBe(1000);
  });
});
