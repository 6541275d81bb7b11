import { t } from "elysia";

const Action = t.Union([t.Literal("fail"), t.Literal("ok"), t.Literal("alert")], {
  description: "fail: a fail signal; ok: an ok signal; alert: one alert with the line (at most one a minute per stream)",
});
const MATCH = "1 to 200 characters: a substring, or with regex an RE2 pattern (linear time, no backreferences or lookaround)";

export const Rule = t.Object({
  match: t.String({ description: MATCH }),
  regex: t.Boolean(),
  case_sensitive: t.Boolean(),
  then: Action,
});

// `then` is checked by the service, so a wrong one is refused naming its rule (note.rules[2].then).
export const RuleInput = t.Object({
  match: t.String({ description: MATCH }),
  regex: t.Optional(t.Boolean({ description: "Default false: match is a substring" })),
  case_sensitive: t.Optional(t.Boolean({ description: "Default false" })),
  then: t.String({ description: "fail, ok or alert" }),
});
