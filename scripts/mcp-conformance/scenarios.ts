// Which of the conformance suite's server scenarios apply to notestream, and why the others do
// not. Most scenarios call fixtures of the SDKs' reference "everything" server by name (a tool
// called test_simple_text, a resource at test://static-text, a prompt called test_simple_prompt):
// a domain server has none of them, and failing those says nothing about it. The table is the
// suite's full list, so a scenario a new version of the suite adds shows up as unclassified.

export type Transport = "http" | "stdio";

export interface Scenario {
  name: string;
  /** The transports it applies to; empty: it does not apply. */
  applies: Transport[];
  why: string;
  /** Checks of an applicable scenario that need a fixture tool: their "Not testable" failures do not count. */
  fixtureChecks?: string[];
}

const both: Transport[] = ["http", "stdio"];
const http: Transport[] = ["http"];
const none: Transport[] = [];

const fixtureTool = (tool: string) => `calls the reference server's fixture tool ${tool}; notestream has no such tool`;
const fixturePrompt = (prompt: string) => `gets the reference server's fixture prompt ${prompt}; notestream's prompts are summarise_stream, daily_digest, incident_timeline`;
const fixtureResource = (uri: string) => `reads the reference server's fixture resource ${uri}; notestream's resources are notestream://streams/{filename} and notestream://notes/{id} (the Inspector checks read them)`;
const httpOnly = "tests the Streamable HTTP transport itself; over stdio it would test the bridge, not the server";

/** @modelcontextprotocol/conformance 0.1.16: protocol revision 2025-11-25 (and 2025-06-18). */
export const SCENARIOS_2025_11_25: Scenario[] = [
  { name: "server-initialize", applies: both, why: "the initialize handshake" },
  { name: "logging-set-level", applies: none, why: "notestream declares no logging capability, so logging/setLevel is not offered (it answers -32601 Method not found, as the specification has it)" },
  { name: "ping", applies: both, why: "ping answers {}" },
  { name: "completion-complete", applies: both, why: "completion/complete answers a well-formed result (values for an argument it does not know: none)" },
  { name: "tools-list", applies: both, why: "every tool has a name, a description and an inputSchema" },
  { name: "tools-call-simple-text", applies: none, why: fixtureTool("test_simple_text") },
  { name: "tools-call-image", applies: none, why: fixtureTool("test_image_content") },
  { name: "tools-call-audio", applies: none, why: fixtureTool("test_audio_content") },
  { name: "tools-call-embedded-resource", applies: none, why: fixtureTool("test_embedded_resource") },
  { name: "tools-call-mixed-content", applies: none, why: fixtureTool("test_multiple_content_types") },
  { name: "tools-call-with-logging", applies: none, why: `${fixtureTool("test_tool_with_logging")}, and declares no logging` },
  { name: "tools-call-error", applies: none, why: fixtureTool("test_error_handling") },
  { name: "tools-call-with-progress", applies: none, why: fixtureTool("test_tool_with_progress") },
  { name: "tools-call-sampling", applies: none, why: `${fixtureTool("test_sampling")}; notestream never asks the client to sample` },
  { name: "tools-call-elicitation", applies: none, why: `${fixtureTool("test_elicitation")}; notestream never elicits` },
  { name: "json-schema-2020-12", applies: none, why: fixtureTool("json_schema_2020_12_tool") },
  { name: "elicitation-sep1034-defaults", applies: none, why: fixtureTool("test_elicitation_sep1034_defaults") },
  { name: "server-sse-polling", applies: none, why: `${fixtureTool("test_reconnection")} (closes its event stream mid-call); notestream answers POSTs with JSON, never an event stream` },
  { name: "server-sse-multiple-streams", applies: http, why: `concurrent POSTs in one session are all answered (${httpOnly})` },
  { name: "elicitation-sep1330-enums", applies: none, why: fixtureTool("test_elicitation_sep1330_enums") },
  { name: "resources-list", applies: both, why: "resources/list: each resource has a uri and a name" },
  { name: "resources-read-text", applies: none, why: fixtureResource("test://static-text") },
  { name: "resources-read-binary", applies: none, why: `${fixtureResource("test://static-binary")}; notes are text, never binary` },
  { name: "resources-templates-read", applies: none, why: fixtureResource("test://template/123/data") },
  { name: "resources-subscribe", applies: none, why: "subscribes to the fixture test://watched-resource; notestream refuses a URI that names none of its notes (-32602). Subscriptions to streams are covered by test/integration/mcp-resources tests" },
  { name: "resources-unsubscribe", applies: none, why: "subscribes to the fixture test://watched-resource first (see resources-subscribe)" },
  { name: "prompts-list", applies: both, why: "prompts/list: each prompt has a name and a description" },
  { name: "prompts-get-simple", applies: none, why: fixturePrompt("test_simple_prompt") },
  { name: "prompts-get-with-args", applies: none, why: fixturePrompt("test_prompt_with_arguments") },
  { name: "prompts-get-embedded-resource", applies: none, why: fixturePrompt("test_prompt_with_embedded_resource") },
  { name: "prompts-get-with-image", applies: none, why: fixturePrompt("test_prompt_with_image") },
  {
    name: "dns-rebinding-protection",
    applies: http,
    why: `a request whose Host and Origin name another site is refused, one from an allowed origin accepted; run with NOTESTREAM_MCP_ALLOWED_ORIGINS naming the origin the suite calls from and no NOTESTREAM_BASE_URL (unset, any origin may call with a token, by design: /mcp reads no cookie) (${httpOnly})`,
  },
];

const fixtureInputRequired = "calls the reference server's test_input_required_result_* fixtures; notestream never answers with an InputRequiredResult (it asks the client for nothing)";
const sameAs = (name: string): Scenario => ({ ...SCENARIOS_2025_11_25.find((s) => s.name === name)! });

/** @modelcontextprotocol/conformance 0.2.0-alpha.12 with --requirements 2026-07-28. */
export const SCENARIOS_2026_07_28: Scenario[] = [
  {
    name: "server-stateless",
    applies: http,
    why: "server/discover, _meta on every request, version and header errors, removed methods answering 404, subscriptions/listen (SEP-2575)",
    // Each needs a diagnostic tool of the reference server (test_missing_capability, test_streaming_elicitation, test_logging_tool).
    fixtureChecks: [
      "sep-2575-server-rejects-undeclared-capability",
      "sep-2575-missing-capability-http-400",
      "sep-2575-http-server-no-independent-requests-on-stream",
      "sep-2575-server-no-log-without-loglevel",
    ],
  },
  ...["completion-complete", "tools-list", "resources-list", "prompts-list", "server-sse-multiple-streams", "dns-rebinding-protection"].map(sameAs),
  ...["tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-error", "tools-call-with-progress", "json-schema-2020-12"].map(sameAs),
  ...["resources-read-text", "resources-read-binary", "resources-templates-read"].map(sameAs),
  ...["prompts-get-simple", "prompts-get-with-args", "prompts-get-embedded-resource", "prompts-get-with-image"].map(sameAs),
  { name: "sep-2164-resource-not-found", applies: both, why: "resources/read of a URI that names nothing answers -32602 with the uri in data (SEP-2164)" },
  { name: "caching", applies: both, why: "tools/list, prompts/list, resources/list, resources/templates/list and resources/read carry ttlMs and cacheScope (SEP-2549)" },
  { name: "http-header-validation", applies: none, why: "pending in the suite (not scored for 2026-07-28)" },
  { name: "http-custom-header-server-validation", applies: none, why: "pending in the suite (not scored), and needs a fixture tool with custom-header parameters" },
  { name: "input-required-result-unsupported-methods", applies: both, why: "tools/list and prompts/list never answer with an InputRequiredResult" },
  ...[
    "basic-elicitation",
    "basic-sampling",
    "basic-list-roots",
    "request-state",
    "multiple-input-requests",
    "multi-round",
    "missing-input-response",
    "non-tool-request",
    "result-type",
    "tampered-state",
    "capability-check",
    "ignore-extra-params",
    "validate-input",
  ].map((n): Scenario => ({ name: `input-required-result-${n}`, applies: none, why: fixtureInputRequired })),
  ...[
    "lifecycle",
    "capability-negotiation",
    "wire-fields",
    "request-state-removal",
    "mrtr-input",
    "request-headers",
    "dispatch-and-envelope",
    "status-notifications",
    "required-task-error",
    "mrtr-composition",
  ].map((n): Scenario => ({ name: `tasks-${n}`, applies: none, why: "the tasks extension (not scored); notestream implements no tasks: every tool answers at once" })),
];
