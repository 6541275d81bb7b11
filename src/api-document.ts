/**
 * What the published API document says beyond the routes under /api/v1: the paths API users meet
 * outside it (the inbox URL, status badges, health checks, MCP, the billing webhook), each with its own security,
 * and the routes that may answer 423. The document itself is built by http/openapi.ts.
 */
import pkg from "../package.json";
import { apiDocument } from "./http/openapi";

const json = (schema: object) => ({ "application/json": { schema } });
const err = (status: number) => ({ $ref: `#/components/responses/E${status}` });

const EXTRA_PATHS = {
  "/h/{token}": {
    post: {
      tags: ["inbox"],
      operationId: "postInbox",
      summary: "A note's inbound webhook: any body and content type; the token in the URL is the credential",
      description:
        "Each request is stored and summarised into one line appended to the note (Alertmanager, Grafana, GitHub, Uptime Kuma and others are recognised). Up to 256 KB; 60 a minute per inbox.",
      security: [],
      parameters: [{ name: "token", in: "path", required: true, schema: { type: "string" }, description: "The secret part of the inbox URL (inb_…)" }],
      requestBody: { required: false, content: { "*/*": { schema: {} } } },
      responses: {
        "202": { description: "Stored; the line is appended shortly", content: json({ type: "object", required: ["ok", "id"], properties: { ok: { const: true }, id: { type: "string", description: "ibx_…" } } }) },
        "403": err(403),
        "404": err(404),
        "413": err(413),
        "429": err(429),
      },
    },
  },
  "/badge/{token}.svg": {
    get: {
      tags: ["badges"],
      operationId: "getBadgeSvg",
      summary: "A stream's status badge as an image; the token in the URL is the credential",
      description: "A flat two-part badge: the stream's filename, then up, late, failing, paused or new in its color. Cache-Control: no-cache.",
      security: [],
      parameters: [{ name: "token", in: "path", required: true, schema: { type: "string" }, description: "The secret part of the badge URL (bdg_…)" }],
      responses: { "200": { description: "The badge", content: { "image/svg+xml": { schema: { type: "string" } } } }, "404": err(404) },
    },
  },
  "/badge/{token}.json": {
    get: {
      tags: ["badges"],
      operationId: "getBadgeJson",
      summary: "A stream's status badge as shields.io's endpoint JSON (img.shields.io/endpoint?url=…)",
      security: [],
      parameters: [{ name: "token", in: "path", required: true, schema: { type: "string" }, description: "The secret part of the badge URL (bdg_…)" }],
      responses: {
        "200": {
          description: "The badge",
          content: json({
            type: "object",
            required: ["schemaVersion", "label", "message", "color"],
            additionalProperties: false,
            properties: {
              schemaVersion: { const: 1 },
              label: { type: "string" },
              message: { type: "string", enum: ["up", "late", "failing", "paused", "new"] },
              color: { type: "string" },
            },
          }),
        },
        "404": err(404),
      },
    },
  },
  "/up": {
    get: {
      tags: ["health"],
      operationId: "getUp",
      summary: "Liveness: the process answers",
      security: [],
      responses: { "200": { description: "Up", content: json({ type: "object", required: ["ok"], properties: { ok: { const: true } } }) } },
    },
  },
  "/up/deep": {
    get: {
      tags: ["health"],
      operationId: "getUpDeep",
      summary: "Readiness: a real database query and the scheduler's and job runner's heartbeats",
      security: [],
      responses: {
        "200": { description: "Every check passed", content: json({ $ref: "#/components/schemas/DeepHealth" }) },
        "503": { description: "A check failed", content: json({ $ref: "#/components/schemas/DeepHealth" }) },
      },
    },
  },
  "/mcp": {
    post: {
      tags: ["mcp"],
      operationId: "postMcp",
      summary: "Model Context Protocol over Streamable HTTP (stateless, JSON answers)",
      description:
        "JSON-RPC 2.0 messages of the MCP specification. Authorised with an API token or an OAuth access token (discovery: /.well-known/oauth-protected-resource/mcp). A 401 carries WWW-Authenticate with resource_metadata.",
      requestBody: { required: true, content: json({ type: "object", description: "A JSON-RPC request, notification or batch" }) },
      responses: {
        "200": { description: "The JSON-RPC answer", content: json({ type: "object" }) },
        "202": { description: "A notification, accepted" },
        "401": { description: "No or a refused token; see WWW-Authenticate", headers: { "WWW-Authenticate": { schema: { type: "string" } } } },
        "403": { description: "The Origin is not allowed (NOTESTREAM_MCP_ALLOWED_ORIGINS)" },
      },
    },
  },
  "/webhooks/lemonsqueezy": {
    post: {
      tags: ["billing"],
      operationId: "postBillingWebhook",
      summary: "Lemon Squeezy subscription events (only when billing is configured)",
      description: "Signed by the store: X-Signature is the hex HMAC-SHA256 of the raw body with the webhook secret. Plans are taken from the configured variant ids only.",
      security: [],
      parameters: [{ name: "X-Signature", in: "header", required: true, schema: { type: "string" } }],
      requestBody: { required: true, content: json({ type: "object" }) },
      responses: { "200": { description: "Acknowledged (applied, a replay, or ignored)", content: json({ type: "object" }) }, "400": err(400), "401": err(401) },
    },
  },
};

const DEEP_HEALTH = {
  type: "object",
  required: ["ok", "checks"],
  properties: {
    ok: { type: "boolean" },
    checks: {
      type: "object",
      additionalProperties: {
        type: "object",
        required: ["status"],
        properties: { status: { type: "string", enum: ["ok", "fail"] }, detail: { type: "string" }, ms: { type: "number" } },
      },
    },
  },
};

/** The document served at /api/v1/openapi.json, built once from the finished app's routes. */
export function notestreamApiDocument(app: Parameters<typeof apiDocument>[0]) {
  const doc = apiDocument(app, {
    info: { title: "notestream API", version: pkg.version, description: "Append-only streams and editable plain-text notes." },
    prefix: "/api/v1/",
    publicPaths: new Set(["/api/v1/openapi.json"]),
    extraPaths: EXTRA_PATHS,
    moreErrors: {
      "PATCH /api/v1/notes/{id}": [423],
      "POST /api/v1/notes/{id}/append": [423],
      "POST /api/v1/notes/by-filename/{filename}/append": [423],
      "POST /api/v1/notes/{id}/snapshots/{snapshot_id}/restore": [423],
    },
  });
  doc.components.schemas.DeepHealth = DEEP_HEALTH;
  return doc;
}
