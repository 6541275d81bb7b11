import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { CSS, JS } from "../../web/assets";
import { accountPages } from "./account-pages";
import { authPages } from "./auth-pages";
import { exportPages } from "./export-pages";
import { noteListPages } from "./note-list-pages";
import { notePages } from "./note-pages";
import { streamSettingsPages } from "./stream-settings-pages";
import { tokenPages } from "./token-pages";

/**
 * The browser surface: server-rendered pages, one file per page group, over the same services as
 * the API. What the pages share with the OAuth consent page (session, guards, layout, macros,
 * error answers) is in src/web/.
 */
export const webRoutes = (deps: Deps) =>
  new Elysia()
    .get("/assets/app.css", () => new Response(CSS, { headers: { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=3600" } }))
    .get("/assets/app.js", () => new Response(JS, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" } }))
    .use(authPages(deps))
    .use(noteListPages(deps))
    .use(notePages(deps))
    .use(streamSettingsPages(deps))
    .use(accountPages(deps))
    .use(tokenPages(deps))
    .use(exportPages(deps));
