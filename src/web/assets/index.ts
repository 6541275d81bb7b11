/**
 * The app's stylesheet and its one script, served from the binary itself (/assets/app.css,
 * /assets/app.js). Each feature keeps its piece in a file of its own here; the bundle is their
 * concatenation, the script's pieces inside one function (they share `csrf` and `post` from core).
 * Pieces must guard themselves (run only when their page's elements are there): every page loads
 * the whole script. No inline script or style anywhere: the pages' policy forbids both.
 */
import { BASE_CSS } from "./base.css";
import { CORE_JS } from "./core.js";
import { EDITOR_JS } from "./editor.js";
import { STREAM_JS } from "./stream.js";

const CSS_PIECES = [BASE_CSS];
const JS_PIECES = [CORE_JS, EDITOR_JS, STREAM_JS];

export const CSS = CSS_PIECES.join("\n");
export const JS = `(function(){\n${JS_PIECES.join("\n")}\n})();\n`;
