/**
 * The app's stylesheet and its one script, served from the binary itself (/assets/app.css,
 * /assets/app.js). Each feature keeps its piece in a file of its own here; the bundle is their
 * concatenation, the script's pieces inside one function (they share `csrf` and `post` from core).
 * Pieces must guard themselves (run only when their page's elements are there): every page loads
 * the whole script. No inline script or style anywhere: the pages' policy forbids both.
 */
import { APPS_CSS } from "./apps.css";
import { BASE_CSS } from "./base.css";
import { BOARD_CSS } from "./board.css";
import { BOARD_JS } from "./board.js";
import { CHANNELS_JS } from "./channels.js";
import { LAYOUT_CSS } from "./layout.css";
import { ONBOARDING_CSS } from "./onboarding.css";
import { CORE_JS } from "./core.js";
import { EDITOR_CSS } from "./editor.css";
import { EDITOR_JS } from "./editor.js";
import { FORMS_CSS } from "./forms.css";
import { SETTINGS_CSS } from "./settings.css";
import { SEARCH_CSS } from "./search.css";
import { STREAM_JS } from "./stream.js";
import { THEME_JS } from "./theme.js";
import { TIMES_JS } from "./times.js";

const CSS_PIECES = [BASE_CSS, LAYOUT_CSS, BOARD_CSS, EDITOR_CSS, SETTINGS_CSS, SEARCH_CSS, FORMS_CSS, APPS_CSS, ONBOARDING_CSS];
const JS_PIECES = [CORE_JS, THEME_JS, TIMES_JS, EDITOR_JS, STREAM_JS, BOARD_JS, CHANNELS_JS];

/** Served alone and loaded blocking in the head: the stored theme, before the first paint. */
export { THEME_HEAD_JS } from "./theme.js";

export const CSS = CSS_PIECES.join("\n");
export const JS = `(function(){\n${JS_PIECES.join("\n")}\n})();\n`;
