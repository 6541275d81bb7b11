import { Elysia } from "elysia";
import type { AnyAuth } from "../../http/plugins/auth";
import { AccountRecord, TokenRecord } from "./model";
import { describeAccount } from "./service";

export const accountRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .get("/account", ({ ctx }) => describeAccount({ ctx }), {
      response: { 200: AccountRecord },
      detail: { tags: ["account"], summary: "Plan, state, usage and caps of the token's workspace" },
    })
    .get(
      "/token",
      ({ ctx }) => ({
        id: ctx.principal.tokenId,
        kind: ctx.principal.kind,
        scopes: [...ctx.principal.scopes],
        note_id: ctx.principal.noteId,
        workspace_id: ctx.principal.workspaceId,
        expires_at: new Date(ctx.principal.validUntil).toISOString(),
      }),
      { response: { 200: TokenRecord }, detail: { tags: ["account"], summary: "The calling token: its scopes, pinned note and expiry (any token may ask)" } },
    );
