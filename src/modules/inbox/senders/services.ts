import { type Json, join, str } from "./common";

/** Monitoring and registry senders whose payload is one event, not a group. */

// Uptime Kuma's heartbeat status codes, from its src/util.ts: DOWN 0, UP 1, PENDING 2, MAINTENANCE 3.
const KUMA_STATUS = ["DOWN", "UP", "PENDING", "MAINTENANCE"];

export const isUptimeKuma = (b: Json) => "heartbeat" in b && "monitor" in b && typeof b.msg === "string";

export function uptimeKuma(b: Json): string {
  const hb = b.heartbeat;
  // The test notification has no heartbeat; its top-level msg is all there is.
  if (!hb || typeof hb !== "object") return `Uptime Kuma: ${str(b.msg)}`;
  const status = KUMA_STATUS[hb.status] ?? str(hb.status);
  return join(`Uptime Kuma ${status}:`, b.monitor?.name, str(hb.msg) ? `- ${str(hb.msg)}` : "");
}

/** healthchecks.io's $JSON placeholder: the check's API representation. */
export const isHealthchecks = (b: Json) => typeof b.name === "string" && typeof b.status === "string" && "grace" in b && ("n_pings" in b || "last_ping" in b);

export function healthchecks(b: Json): string {
  const last = str(b.last_ping);
  return `healthchecks.io: ${str(b.name)} is ${str(b.status).toUpperCase()}${last ? ` (last ping ${last})` : ""}`;
}

export const isDockerHub = (b: Json) => b.push_data && typeof b.push_data === "object" && typeof b.repository?.repo_name === "string";

export function dockerHub(b: Json): string {
  const tag = str(b.push_data.tag);
  return join(`Docker Hub push to ${str(b.repository.repo_name)}${tag ? `:${tag}` : ""}`, str(b.push_data.pusher) ? `by ${str(b.push_data.pusher)}` : "");
}
