import { Elysia } from "elysia";
import { unauthorized } from "../http/errors";
import { digestsEqual, sha256Hex } from "../lib/secrets";
import type { Metrics } from "./metrics";

/**
 * GET /metrics, in Prometheus text format, for the one scraper that holds NOTESTREAM_METRICS_TOKEN
 * as its Bearer token. The app registers it only when that is set; otherwise /metrics is an
 * unknown path (404), so an unconfigured service does not even say it could expose them.
 */
export function metricsRoutes(metrics: Metrics, token: string) {
  const expected = sha256Hex(token);
  return new Elysia().get(
    "/metrics",
    async ({ request, set }) => {
      const given = /^Bearer (\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
      // Digests of equal length, compared in constant time: neither the token nor its length leaks through timing.
      if (!given || !digestsEqual(sha256Hex(given), expected)) throw unauthorized("GET /metrics takes NOTESTREAM_METRICS_TOKEN as a Bearer token");
      set.headers["content-type"] = metrics.contentType;
      set.headers["cache-control"] = "no-store";
      return metrics.text();
    },
    { detail: { hide: true } },
  );
}
