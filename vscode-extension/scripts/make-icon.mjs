// Draws images/icon.png (128x128): the same mark as images/nexa-file.svg,
// rasterised here with 4x4 supersampling so no image tool is needed.
// Run `npm run icon` after changing the drawing.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { deflateSync } from "node:zlib";

const SIZE = 128;
const S = SIZE / 16; // the SVG's 16-unit grid

const hex = (h) => [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)];
const BG = hex("#5b4bd6");
const BG2 = hex("#3f2fb8");
const FG = hex("#ffffff");
const DOT = hex("#7ee0c3");

function inRoundedRect(x, y, x0, y0, w, h, r) {
  const cx = Math.min(Math.max(x, x0 + r), x0 + w - r);
  const cy = Math.min(Math.max(y, y0 + r), y0 + h - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
}

function distToSegment(px, py, ax, ay, bx, by) {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

const stroke = [
  [4.5, 11.5, 4.5, 4.5],
  [4.5, 4.5, 11.5, 11.5],
  [11.5, 11.5, 11.5, 4.5],
];

function sample(u, v) {
  // u, v in SVG units; returns [r, g, b, a]
  if (!inRoundedRect(u, v, 1, 1, 14, 14, 3)) return [0, 0, 0, 0];
  if (Math.hypot(u - 11.5, v - 4.5) <= 1.3) return [...DOT, 255];
  if (stroke.some(([ax, ay, bx, by]) => distToSegment(u, v, ax, ay, bx, by) <= 0.85)) return [...FG, 255];
  const t = (u + v) / 32; // diagonal gradient
  return [0, 1, 2].map((i) => Math.round(BG[i] * (1 - t) + BG2[i] * t)).concat(255);
}

const N = 4;
const raw = Buffer.alloc(SIZE * (SIZE * 4 + 1));
for (let y = 0; y < SIZE; y++) {
  raw[y * (SIZE * 4 + 1)] = 0; // filter: none
  for (let x = 0; x < SIZE; x++) {
    const acc = [0, 0, 0, 0];
    for (let sy = 0; sy < N; sy++) {
      for (let sx = 0; sx < N; sx++) {
        const c = sample((x + (sx + 0.5) / N) / S, (y + (sy + 0.5) / N) / S);
        const a = c[3] / 255;
        acc[0] += c[0] * a;
        acc[1] += c[1] * a;
        acc[2] += c[2] * a;
        acc[3] += c[3];
      }
    }
    const alpha = acc[3] / (N * N);
    const o = y * (SIZE * 4 + 1) + 1 + x * 4;
    const norm = alpha > 0 ? (N * N * alpha) / 255 : 1;
    raw[o] = Math.round(acc[0] / norm);
    raw[o + 1] = Math.round(acc[1] / norm);
    raw[o + 2] = Math.round(acc[2] / norm);
    raw[o + 3] = Math.round(alpha);
  }
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(SIZE, 0);
ihdr.writeUInt32BE(SIZE, 4);
ihdr[8] = 8; // bit depth
ihdr[9] = 6; // RGBA
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk("IHDR", ihdr),
  chunk("IDAT", deflateSync(raw, { level: 9 })),
  chunk("IEND", Buffer.alloc(0)),
]);
const out = join(dirname(fileURLToPath(import.meta.url)), "..", "images", "icon.png");
writeFileSync(out, png);
console.log(`wrote ${out} (${png.length} bytes)`);
