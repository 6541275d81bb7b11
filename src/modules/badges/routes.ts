import { Elysia, t } from "elysia";
import type { Deps } from "../../deps";
import { NotFound } from "../../http/errors";
import { publicOrigin } from "../../http/origin";
import type { AnyAuth } from "../../http/plugins/auth";
import { send } from "../../http/reply";
import { NoteIdParams } from "../notes/model";
import { BadgeUrls } from "./model";
import * as badges from "./service";
import { badgeSvg } from "./svg";

const detail = (summary: string) => ({ detail: { tags: ["badges"], summary } });

/** Managing a stream's status badge, under /api/v1. */
export const badgeRoutes = (auth: AnyAuth) =>
  new Elysia()
    .use(auth)
    .post("/notes/:id/badge", async ({ ctx, params, request }) => send(await badges.rotateBadge({ ctx, noteId: params.id, baseUrl: publicOrigin(ctx.deps, request) })), {
      params: NoteIdParams,
      response: { 201: BadgeUrls },
      ...detail("Create or rotate a stream's status badge; the old URLs stop working at once"),
    })
    .delete("/notes/:id/badge", async ({ ctx, params }) => send(await badges.deleteBadge({ ctx, noteId: params.id })), {
      params: NoteIdParams,
      response: { 200: t.Object({ id: t.String(), badge_enabled: t.Literal(false) }) },
      ...detail("Remove a stream's status badge; its URLs answer 404"),
    });

const KINDS = { svg: "image/svg+xml; charset=utf-8", json: "application/json" } as const;

/** GET /badge/{token}.svg and .json: no auth header; the token in the URL is the credential. */
export const badgeReadRoutes = (deps: Deps) =>
  new Elysia().get(
    "/badge/:file",
    async ({ params, set }) => {
      const dot = params.file.lastIndexOf(".");
      const kind = params.file.slice(dot + 1);
      if (dot < 0 || !(kind in KINDS)) throw new NotFound("badge");
      const badge = await badges.readBadge(deps, params.file.slice(0, dot));
      // A README host (GitHub's camo) or a wall screen asks again rather than keep a stale color.
      set.headers["cache-control"] = "no-cache";
      set.headers["content-type"] = KINDS[kind as keyof typeof KINDS];
      return kind === "svg" ? badgeSvg(badge) : JSON.stringify(badge);
    },
    { detail: { hide: true } },
  );
