import { Elysia } from "elysia";

/**
 * The favicon: lines of a stream on the accent colour. One drawing, two files served from the
 * binary: an SVG for the pages' <link rel="icon">, and /favicon.ico for whatever asks for that
 * path without reading the page (bookmarks, feed readers, old browsers).
 */
const SIZE = 32;
const SHAPES = [
  { x: 0, y: 0, w: 32, h: 32, r: 7, fill: "#2f5bd3" },
  { x: 7, y: 9, w: 18, h: 3, r: 1.5, fill: "#ffffff" },
  { x: 7, y: 15, w: 12, h: 3, r: 1.5, fill: "#ffffff" },
  { x: 7, y: 21, w: 15, h: 3, r: 1.5, fill: "#ffffff" },
];

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${SIZE} ${SIZE}">${SHAPES.map(
  (s) => `<rect x="${s.x}" y="${s.y}" width="${s.w}" height="${s.h}" rx="${s.r}" fill="${s.fill}"/>`,
).join("")}</svg>\n`;

/**
 * /favicon.ico: the same drawing as a 32 px PNG inside an ICO (ICO has held PNG images since
 * Windows Vista; browsers read them), rendered once from SHAPES with 4×4 samples per pixel and
 * kept as its bytes.
 */
const FAVICON_ICO = Buffer.from(
  "AAABAAEAICAAAAEAIADhAAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgGAAAAc3p69AAAAKhJREFUeJxjYEAC+tGXFfSjL/frR18+rx99+T+V8Xmo2QrIdiJbnqAfffk9DSxGxyA7ErBZ/p/OOAE52Onhc2whocAAjZf/A4T7GWiU4IjF5xkG0HIwHnUA3hCYvvblf0oByAyyo4BaYOiGwGguGPAQICUNEIpruuSC4RcCA54GRh1AbklISnqgWV0wPEJgxCTCAW+UDnizfGA7JgPeNWMYDJ3TgeyeAwCH5fgYE5I4GgAAAABJRU5ErkJggg==",
  "base64",
);
const CACHE = "public, max-age=86400";

export const faviconRoutes = () =>
  new Elysia()
    .get("/favicon.svg", () => new Response(FAVICON_SVG, { headers: { "content-type": "image/svg+xml", "cache-control": CACHE } }))
    .get("/favicon.ico", () => new Response(FAVICON_ICO, { headers: { "content-type": "image/x-icon", "cache-control": CACHE } }));
