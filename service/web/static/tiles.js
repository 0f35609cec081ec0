// Domino tiles drawn as SVG.
//
// Chinese tiles (Tien Gow, Tiu U): dark tiles with white and red pips (docs/rules/tiengow.md, "Tiles"):
// every pip of a 1-face and of a 4-face is red,
// the 6-6 (Heaven) has half of its pips red -- 3 red + 3 white on each half, drawn as a red column beside a
// white one -- and every other pip is white. Pip layouts follow the two dice the tile stands for.
// Western tiles (Kozel): ivory double-six tiles with black pips and a dividing bar; 0 is a blank half.

import { t, currentLang } from "./i18n.js";

export const CIVIL_ORDER = ["6-6", "1-1", "4-4", "3-1", "5-5", "3-3", "2-2", "6-5", "6-4", "6-1", "5-1"];
// the tile keys of engine/tiles.py's names: the catalog has tile.<key> and, in English, tile.<key>.zh
const CIVIL_KEYS = {
  "6-6": "heaven", "1-1": "earth", "4-4": "man", "3-1": "goose", "5-5": "plum", "3-3": "long_three",
  "2-2": "bench", "6-5": "axe", "6-4": "partition", "6-1": "long_leg_seven", "5-1": "big_head_six",
};
export const MILITARY_ORDER = ["6-3", "5-4", "6-2", "5-3", "5-2", "4-3", "4-2", "4-1", "3-2", "2-1"];
const MILITARY_CLASS = { "6-3": 9, "5-4": 9, "6-2": 8, "5-3": 8, "5-2": 7, "4-3": 7, "4-2": 6, "4-1": 5, "3-2": 5, "2-1": 3 };
const MILITARY_KEYS = {
  "6-3": "nine", "5-4": "nine", "6-2": "eight", "5-3": "eight", "5-2": "seven", "4-3": "seven",
  "4-2": "big_six", "4-1": "five", "3-2": "five", "2-1": "little_three",
};

export function halves(tile) {
  const [a, b] = tile.split("-").map(Number);
  return [a, b];
}

export function isCivil(tile) {
  return CIVIL_KEYS[tile] !== undefined;
}

/** The key of a Chinese tile's name ("heaven"), null for a tile with none. */
export function tileKey(tile) {
  return CIVIL_KEYS[tile] || MILITARY_KEYS[tile] || null;
}

/** A Chinese tile's name in the chosen language and its Chinese name: ["Heaven", "天"] (in Chinese the
 * name is already Chinese: ["天", ""]). */
export function tileNames(tile) {
  const key = tileKey(tile);
  if (!key) return [tile, ""];
  const name = t(`tile.${key}`);
  const zh = currentLang().startsWith("zh") ? "" : t(`tile.${key}.zh`);
  return [name, zh];
}

/** A readable name: "6-6 Heaven 天 (civil)", "4-2 Big Six 二四 (military)", "5-3" for a Western tile. */
export function tileName(tile, set = "chinese") {
  if (set !== "chinese" || !tileKey(tile)) return tile;
  const [name, zh] = tileNames(tile);
  return t("tile.label", { tile, name, zh, kind: t(isCivil(tile) ? "tile.civil" : "tile.military") }).replace(/\s+/g, " ");
}

/** Sort key of a Chinese tile: civil first, best first, then military by class, best first. */
export function chineseRank(tile) {
  const c = CIVIL_ORDER.indexOf(tile);
  if (c >= 0) return c;
  const [a] = halves(tile);
  return 100 - (MILITARY_CLASS[tile] ?? 0) + (6 - a) / 10;
}

/** Sort key of a Western tile: by pip total, then by high half (highest first). */
export function westernRank(tile) {
  const [a, b] = halves(tile);
  return -(a + b) * 10 - a;
}

// pip centres on a 3x3 grid (column, row) per face
const CHINESE_PIPS = {
  1: [[1, 1]],
  2: [[2, 0], [0, 2]],
  3: [[2, 0], [1, 1], [0, 2]],
  4: [[0, 0], [2, 0], [0, 2], [2, 2]],
  5: [[0, 0], [2, 0], [1, 1], [0, 2], [2, 2]],
  6: [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2]],
};
const WESTERN_PIPS = { 0: [], ...CHINESE_PIPS };

const RED = "#d8272f";
const WHITE = "#f3efe6";
const BLACK = "#1d1b19";

function pipsFor(face, x0, y0, w, h, set, heaven) {
  const grid = WESTERN_PIPS[face];
  const out = [];
  const cx = (i) => x0 + w * (0.24 + 0.26 * i);
  const cy = (j) => y0 + h * (0.24 + 0.26 * j);
  const r = Math.min(w, h) * (face === 1 && set === "chinese" ? 0.17 : 0.095);
  for (const [i, j] of grid) {
    let fill;
    if (set === "chinese") {
      fill = face === 1 || face === 4 || (heaven && i === 0) ? RED : WHITE;
    } else {
      fill = BLACK;
    }
    out.push(`<circle cx="${cx(i).toFixed(1)}" cy="${cy(j).toFixed(1)}" r="${r.toFixed(1)}" fill="${fill}"/>`);
  }
  return out.join("");
}

/**
 * One tile face as an SVG string.
 * @param {string} tile  "6-3" (high half first)
 * @param {object} o  set: "chinese" | "western"; horizontal: lay it on its side; first: the half drawn
 *   first (top or left), for a tile in Kozel's line whose halves face the neighbours
 */
export function tileSVG(tile, o = {}) {
  const set = o.set || "chinese";
  let [a, b] = halves(tile);
  if (o.first !== undefined && o.first !== a) [a, b] = [b, a];
  const W = 40;
  const H = set === "chinese" ? 86 : 80;
  const heaven = set === "chinese" && tile === "6-6";
  const face = set === "chinese"
    ? `<rect x="1" y="1" width="${W - 2}" height="${H - 2}" rx="6" fill="url(#th-ebony)" stroke="#6d6a66" stroke-width="1.2"/>`
      + `<rect x="3" y="3" width="${W - 6}" height="${H - 6}" rx="4.5" fill="none" stroke="#000" stroke-opacity=".5" stroke-width="1"/>`
    : `<rect x="1" y="1" width="${W - 2}" height="${H - 2}" rx="6" fill="url(#th-ivory)" stroke="#8c8270" stroke-width="1.2"/>`
      + `<line x1="7" y1="${H / 2}" x2="${W - 7}" y2="${H / 2}" stroke="#6f675a" stroke-width="1.6"/>`
      + `<circle cx="${W / 2}" cy="${H / 2}" r="1.8" fill="#b8a46a"/>`;
  const half = H / 2;
  const pips = pipsFor(a, 2, 2, W - 4, half - 3, set, heaven) + pipsFor(b, 2, half + 1, W - 4, half - 3, set, heaven);
  const rot = o.horizontal ? ` transform="rotate(-90 ${W / 2} ${H / 2})"` : "";
  const vb = o.horizontal ? `${(W - H) / 2} ${(H - W) / 2} ${H} ${W}` : `0 0 ${W} ${H}`;
  const cls = `tile ${set} ${o.horizontal ? "h" : "v"}${set === "chinese" ? (isCivil(tile) ? " civil" : " military") : ""}`;
  return `<svg class="${cls}" viewBox="${vb}" role="img" aria-label="${tileName(tile, set)}"><title>${tileName(tile, set)}</title><g${rot}>${face}${pips}</g></svg>`;
}

/** A face-down tile. */
export function backSVG(o = {}) {
  const set = o.set || "chinese";
  const W = 40;
  const H = set === "chinese" ? 86 : 80;
  const rot = o.horizontal ? ` transform="rotate(-90 ${W / 2} ${H / 2})"` : "";
  const vb = o.horizontal ? `${(W - H) / 2} ${(H - W) / 2} ${H} ${W}` : `0 0 ${W} ${H}`;
  return `<svg class="tile back ${set} ${o.horizontal ? "h" : "v"}" viewBox="${vb}" role="img" aria-label="${t("table.face_down")}"><title>${t("table.face_down")}</title><g${rot}>`
    + `<rect x="1" y="1" width="${W - 2}" height="${H - 2}" rx="6" fill="url(#th-back)" stroke="#3b1a12" stroke-width="1.2"/>`
    + `<rect x="5" y="5" width="${W - 10}" height="${H - 10}" rx="3" fill="url(#th-lattice)" stroke="#d9b56a" stroke-opacity=".55" stroke-width="1"/>`
    + `</g></svg>`;
}

/** The shared gradients and patterns, put once in the page. */
export function svgDefs() {
  return `<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>
  <linearGradient id="th-ebony" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#3a3837"/><stop offset=".55" stop-color="#1f1e1d"/><stop offset="1" stop-color="#141312"/></linearGradient>
  <linearGradient id="th-ivory" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#fffdf6"/><stop offset=".6" stop-color="#f1ead8"/><stop offset="1" stop-color="#ddd3bb"/></linearGradient>
  <linearGradient id="th-back" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#9e2b22"/><stop offset="1" stop-color="#5c140f"/></linearGradient>
  <pattern id="th-lattice" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="8" fill="#7a1d16"/><path d="M0 4 L4 0 L8 4 L4 8 Z" fill="none" stroke="#d9b56a" stroke-opacity=".35" stroke-width=".8"/></pattern>
  </defs></svg>`;
}
