import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { back } from "../../web/layout";
import { pageMacros } from "../../web/macros";
import { switchWorkspace } from "../../web/session";
import { firstValue, formFields } from "./form";

/** Where the switcher may lead: the section the switch was made from (layout.ts), never elsewhere. */
const SECTIONS = new Set(["/notes", "/channels", "/settings/tokens", "/settings"]);

/** The header's workspace switcher: the session moves to a team (or back to personal) its account belongs to. */
export const workspacePages = (deps: Deps) =>
  new Elysia().use(pageMacros(deps)).post(
    "/workspace",
    async ({ s, body, request }) => {
      const b = formFields(body);
      const target = await switchWorkspace(deps, request, s, firstValue(b.workspace_id));
      const next = firstValue(b.next);
      return back(SECTIONS.has(next) ? next : "/notes", "ok", target.kind === "personal" ? "You are in your personal workspace." : `You are in the team workspace ${target.name}.`);
    },
    { session: "form", refused: "/notes" },
  );
