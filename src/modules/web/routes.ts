import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { CSS, JS, THEME_HEAD_JS } from "../../web/assets/index";
import { faviconRoutes } from "../../web/favicon";
import { accountPages } from "./account-pages";
import { ackPages } from "./ack-pages";
import { authPages } from "./auth-pages";
import { channelPages } from "./channel-pages";
import { digestPages } from "./digest-pages";
import { connectedAppsPages } from "./connected-apps-pages";
import { exportPages } from "./export-pages";
import { noteListPages } from "./note-list-pages";
import { notifyPages } from "./notify-pages";
import { onboardingPages } from "./onboarding-pages";
import { searchPages } from "./search-pages";
import { notePages } from "./note-pages";
import { streamSettingsPages } from "./stream-settings-pages";
import { tokenPages } from "./token-pages";
import { watchPages } from "./watch-pages";
import { rulesPages } from "./rules-pages";
import { workspacePages } from "./workspace-pages";

/**
 * The browser surface: server-rendered pages, one file per page group, over the same services as
 * the API. What the pages share with the OAuth consent page (session, guards, layout, macros,
 * error answers) is in src/web/.
 */
export const webRoutes = (deps: Deps) =>
  new Elysia()
    .get("/assets/app.css", () => new Response(CSS, { headers: { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=3600" } }))
    .get("/assets/app.js", () => new Response(JS, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" } }))
    .get("/assets/theme.js", () => new Response(THEME_HEAD_JS, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" } }))
    .use(faviconRoutes())
    .use(authPages(deps))
    .use(ackPages(deps))
    .use(noteListPages(deps))
    .use(searchPages(deps))
    .use(notePages(deps))
    .use(streamSettingsPages(deps))
    .use(watchPages(deps))
    .use(rulesPages(deps))
    .use(notifyPages(deps))
    .use(accountPages(deps))
    .use(onboardingPages(deps))
    .use(channelPages(deps))
    .use(digestPages(deps))
    .use(tokenPages(deps))
    .use(connectedAppsPages(deps))
    .use(exportPages(deps))
    .use(workspacePages(deps));
