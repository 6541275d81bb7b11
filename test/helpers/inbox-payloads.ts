// Real senders' payloads, for the inbox's tests.

/** Alertmanager's webhook body (version 4), as its receiver documentation shows it. */
export const alertmanager = {
  receiver: "notestream",
  status: "firing",
  alerts: [
    {
      status: "firing",
      labels: { alertname: "InstanceDown", instance: "db-1:9100", job: "node", severity: "critical" },
      annotations: { summary: "db-1:9100 has been down for more than 5 minutes" },
      startsAt: "2026-11-22T09:55:00.000Z",
      endsAt: "0001-01-01T00:00:00Z",
      generatorURL: "http://prometheus:9090/graph?g0.expr=up+%3D%3D+0",
      fingerprint: "a4b2c3d4e5f60718",
    },
    {
      status: "firing",
      labels: { alertname: "InstanceDown", instance: "db-2:9100", job: "node", severity: "critical" },
      annotations: { summary: "db-2:9100 has been down for more than 5 minutes" },
      startsAt: "2026-11-22T09:56:00.000Z",
      endsAt: "0001-01-01T00:00:00Z",
      generatorURL: "http://prometheus:9090/graph?g0.expr=up+%3D%3D+0",
      fingerprint: "b4b2c3d4e5f60718",
    },
  ],
  groupLabels: { alertname: "InstanceDown" },
  commonLabels: { alertname: "InstanceDown", job: "node", severity: "critical" },
  commonAnnotations: {},
  externalURL: "http://alertmanager:9093",
  version: "4",
  groupKey: '{}:{alertname="InstanceDown"}',
  truncatedAlerts: 0,
};

/** A Stripe event (payment_intent.succeeded), trimmed to the fields a line would use and a few more. */
export const stripeEvent = {
  id: "evt_3MtwBwLkdIwHu7ix0snN8B0M",
  object: "event",
  api_version: "2022-11-15",
  created: 1680064028,
  type: "payment_intent.succeeded",
  livemode: false,
  data: {
    object: {
      id: "pi_3MtwBwLkdIwHu7ix28a3tqPa",
      object: "payment_intent",
      amount: 4200,
      currency: "usd",
      status: "succeeded",
      receipt_email: "jenny@example.com",
      metadata: { order_id: "6735" },
      payment_method_types: ["card", "link"],
    },
  },
};
