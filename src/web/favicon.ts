import { deflateSync } from "node:zlib";
import { Elysia } from "elysia";

/**
 * The favicon: lines of a stream on the accent colour. One drawing, two files served from the
 * binary: an SVG for the pages' <link rel="icon">, and /favicon.ico (a 32 px PNG inside an ICO)
 * for whatever asks for that path without reading the page (bookmarks, feed readers, old browsers).
 */
interface RoundRect {
  x: number;
  y: number;
  w: number;
  h: number;
  r: number;
  fill: string;
}

const SIZE = 32;
const SHAPES: RoundRect[] = [
  { x: 0, y: 0, w: 32, h: 32, r: 7, fill: "#2f5bd3" },
  { x: 7, y: 9, w: 18, h: 3, r: 1.5, fill: "#ffffff" },
  { x: 7, y: 15, w: 12, h: 3, r: 1.5, fill: "#ffffff" },
  { x: 7, y: 21, w: 15, h: 3, r: 1.5, fill: "#ffffff" },
];

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${SIZE} ${SIZE}">${SHAPES.map(
  (s) => `<rect x="${s.x}" y="${s.y}" width="${s.w}" height="${s.h}" rx="${s.r}" fill="${s.fill}"/>`,
).join("")}</svg>\n`;

function inside(s: RoundRect, px: number, py: number): boolean {
  if (px < s.x || px > s.x + s.w || py < s.y || py > s.y + s.h) return false;
  const dx = Math.max(s.x + s.r - px, 0, px - (s.x + s.w - s.r));
  const dy = Math.max(s.y + s.r - py, 0, py - (s.y + s.h - s.r));
  return dx * dx + dy * dy <= s.r * s.r;
}

const rgb = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];

/** The drawing as RGBA rows, each pixel the average of 4×4 samples (smooth corners). */
function rasterise(): Uint8Array {
  const out = new Uint8Array(SIZE * SIZE * 4);
  const n = 4;
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      let [r, g, b, a] = [0, 0, 0, 0];
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const px = x + (sx + 0.5) / n;
          const py = y + (sy + 0.5) / n;
          const top = SHAPES.findLast((s) => inside(s, px, py));
          if (!top) continue;
          const [cr, cg, cb] = rgb(top.fill);
          r += cr;
          g += cg;
          b += cb;
          a += 1;
        }
      }
      const i = (y * SIZE + x) * 4;
      if (a) [out[i], out[i + 1], out[i + 2]] = [Math.round(r / a), Math.round(g / a), Math.round(b / a)];
      out[i + 3] = Math.round((a / (n * n)) * 255);
    }
  }
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

function png(rgba: Uint8Array): Uint8Array {
  const header = new Uint8Array(13);
  const h = new DataView(header.buffer);
  h.setUint32(0, SIZE);
  h.setUint32(4, SIZE);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits per channel, RGBA, deflate, no filter method, not interlaced
  const rows = new Uint8Array(SIZE * (1 + SIZE * 4));
  for (let y = 0; y < SIZE; y++) rows.set(rgba.subarray(y * SIZE * 4, (y + 1) * SIZE * 4), y * (1 + SIZE * 4) + 1);
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", deflateSync(rows)), chunk("IEND", new Uint8Array())];
  return Buffer.concat(parts);
}

/** An ICO holding one PNG image (ICO has allowed PNG images since Windows Vista; browsers read them). */
function ico(image: Uint8Array): Uint8Array {
  const head = new Uint8Array(22);
  const v = new DataView(head.buffer);
  v.setUint16(2, 1, true); // an icon
  v.setUint16(4, 1, true); // one image
  head[6] = SIZE;
  head[7] = SIZE;
  v.setUint16(10, 1, true); // colour planes
  v.setUint16(12, 32, true); // bits per pixel
  v.setUint32(14, image.length, true);
  v.setUint32(18, head.length, true);
  return Buffer.concat([head, image]);
}

let icoBytes: Uint8Array | null = null;
const CACHE = "public, max-age=86400";

export const faviconRoutes = () =>
  new Elysia()
    .get("/favicon.svg", () => new Response(FAVICON_SVG, { headers: { "content-type": "image/svg+xml", "cache-control": CACHE } }))
    .get("/favicon.ico", () => new Response((icoBytes ??= ico(png(rasterise()))), { headers: { "content-type": "image/x-icon", "cache-control": CACHE } }));
