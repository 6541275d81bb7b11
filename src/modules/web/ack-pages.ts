import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { iso } from "../../lib/clock";
import { FormRefused, sameOrigin } from "../../web/guard";
import { html, page } from "../../web/html";
import { layout, when } from "../../web/layout";
import { readAckLink, useAckLink, type AckLinkState } from "../deadman/ack";

/**
 * /ack/{token}: the acknowledge link of an alert mail. The link is the credential (no sign-in, as
 * from a phone's mail app). A GET only shows the page with its one button: mail scanners and link
 * previews fetch links, and must not acknowledge anything; the button's POST does.
 */
export const ackPages = (deps: Deps) =>
  new Elysia()
    .get("/ack/:token", async ({ params }) => ackPage(await readAckLink(deps, params.token), params.token))
    .post("/ack/:token", async ({ params, request }) => {
      if (!sameOrigin(deps, request)) throw new FormRefused();
      return ackPage(await useAckLink(deps, params.token), params.token);
    });

function ackPage(s: AckLinkState | null, token: string): Response {
  if (s === null) {
    return page(layout({ title: "Unknown link", body: html`<div class="card"><h1>This link is not known</h1><p>It may be mistyped, older than 30 days, or its stream was deleted.</p></div>` }), 404);
  }
  const spell = html`<strong>${s.name}</strong> has been ${s.status === "failing" ? "failing" : "late"} since ${when(iso(s.since))}`;
  const body = {
    open: html`<p>${spell}.</p><p>Acknowledging stops the reminders and the escalation of this alert. The stream is still watched: the next spell alerts as usual.</p>
      <form method="post" action="/ack/${token}"><button type="submit" class="primary">Acknowledge</button></form>`,
    acknowledged: html`<p>Acknowledged. ${spell}; no more reminders or escalation of this alert will be sent.</p>`,
    already: html`<p>${spell}. It was acknowledged ${s.acknowledgedAt === null ? "" : when(iso(s.acknowledgedAt))}: no more reminders or escalation will be sent.</p>`,
    ended: html`<p>The alert this link was sent for has ended: <strong>${s.name}</strong> ${
      s.status === "late" || s.status === "failing" ? `is ${s.status} again, a newer alert: its own mail has its own link` : s.status === "paused" ? "is paused" : "is on time"
    }. There is nothing to acknowledge here.</p>`,
  }[s.state];
  return page(layout({ title: `Acknowledge: ${s.name}`, body: html`<div class="card"><h1>Acknowledge an alert</h1>${body}</div>` }));
}
