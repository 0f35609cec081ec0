// The rules (#/rules, #/rules/<id>, and the paths /rules, /rules/<id>): each rule set's summary, its tiles
// in rank order drawn as the table draws them, and its full rules -- the project's own rules pages
// (docs/rules, served by /rules/<id>/text), rendered here. Those pages are written for the project too:
// they cite their sources and sections ("§9.1", "seed 003", files), which mean nothing to a player, so
// the rendering leaves those references out, and the sections that are for programs (move ids).

import { esc } from "./games.js";
import { tileSVG, tileNames, CIVIL_ORDER, MILITARY_ORDER } from "./tiles.js";
import { t, currentLang } from "./i18n.js";
import { app, gameTitle, topBar, loadCatalog } from "./ui.js";

// a sentence or an aside that points at sources, sections or files
const REFERENCE = /§|\bseed(?:s|ed)?\b|\.md\b|README|shared\/|tilehouse\.|engine\/|`[a-z_]+\.py`|\bsection numbers?\b|сид|种子|種子/i;
// headings of the sections written for programs, not players
const FOR_PROGRAMS = /^(move ids|moves|move ids and|hidden information)$|^идентификатор|^ходы$|^走法|^招法/i;

/** Text without its references: asides in brackets that cite, then whole sentences that do. */
export function clean(text) {
  let s = text.replace(/\s*\((?:[^()]|\([^()]*\))*\)/g, (aside) => (REFERENCE.test(aside) ? "" : aside));
  s = s.replace(/\s*（[^（）]*）/g, (aside) => (REFERENCE.test(aside) ? "" : aside));
  s = s.replace(/\*\*Choice\*\*\s*§[\d.#\s]+(?=[:)])/g, "**Choice**");
  const sentences = s.split(/(?<=[.!?。])\s+|(?<=。)/);
  return sentences.filter((x) => !REFERENCE.test(x)).join(" ").replace(/\s+([,.;:])/g, "$1").trim();
}

function inline(text) {
  return esc(text)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[\s(])\*([^*\s][^*]*)\*(?=[\s,.;:)]|$)/g, "$1<em>$2</em>");
}

/** A small Markdown renderer for the rules pages: headings, paragraphs, lists, tables, emphasis, code. */
export function renderMarkdown(md) {
  const lines = md.replace(/\r/g, "").split("\n");
  const out = [];
  let para = [];
  let list = null; // {tag, items: [text]}
  let skipping = 0; // the level of a heading whose section is left out
  const flushPara = () => {
    const text = clean(para.join(" "));
    if (text) out.push(`<p>${inline(text)}</p>`);
    para = [];
  };
  const flushList = () => {
    if (list) {
      const items = list.items.map(clean).filter(Boolean);
      if (items.length) out.push(`<${list.tag}>${items.map((x) => `<li>${inline(x)}</li>`).join("")}</${list.tag}>`);
    }
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const h = /^(#{1,4})\s+(.*)$/.exec(line);
    if (h) {
      flushPara();
      flushList();
      const level = h[1].length;
      if (skipping && level > skipping) continue;
      skipping = 0;
      const title = clean(h[2]).replace(/\s*—\s*rule set\s*`[^`]+`$/i, "").replace(/\s*`[a-z_]+`$/i, "");
      if (FOR_PROGRAMS.test(title.trim())) {
        skipping = level;
        continue;
      }
      if (level === 1) continue; // the page's title: the screen has its own
      out.push(`<h${level + 1}>${inline(title)}</h${level + 1}>`);
      continue;
    }
    if (skipping) continue;
    if (/^\|/.test(line)) {
      flushPara();
      flushList();
      const rows = [];
      while (i < lines.length && /^\|/.test(lines[i])) rows.push(lines[i++]);
      i--;
      const cells = (r) => r.replace(/^\||\|$/g, "").split("|").map((c) => clean(c.trim()));
      const body = rows.filter((r, k) => k !== 1 || !/^\|[\s:|-]+\|?$/.test(r));
      const [head, ...rest] = body.map(cells);
      out.push(`<div class="scrollx" tabindex="0" role="region" aria-label="${esc(head.join(", "))}"><table class="results"><thead><tr>${head.map((c) => `<th>${inline(c)}</th>`).join("")}</tr></thead><tbody>${rest.map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join("")}</tr>`).join("")}</tbody></table></div>`);
      continue;
    }
    const li = /^\s*(?:[*-]|(\d+)\.)\s+(.*)$/.exec(line);
    if (li) {
      flushPara();
      const tag = li[1] ? "ol" : "ul";
      if (!list || list.tag !== tag || /^\S/.test(line) === false && !list) {
        flushList();
        list = { tag, items: [] };
      }
      list.items.push(li[2]);
      continue;
    }
    if (!line.trim()) {
      flushPara();
      flushList();
      continue;
    }
    if (list && /^\s+/.test(line)) {
      list.items[list.items.length - 1] += ` ${line.trim()}`;
      continue;
    }
    flushList();
    para.push(line.trim());
  }
  flushPara();
  flushList();
  return out.join("\n");
}

function tileFigure(tile, set = "chinese") {
  const [name, zh] = set === "chinese" ? tileNames(tile) : [tile, ""];
  return `<figure class="ranktile">${tileSVG(tile, { set })}<figcaption>${zh ? `<b lang="zh-Hant">${esc(zh)}</b>` : ""}<span>${esc(name)}</span><small>${esc(tile)}</small></figcaption></figure>`;
}

/** The tiles of a rule set in rank order, as pictures. */
function ranking(rulesId) {
  if (rulesId === "kozel") {
    const all = [];
    for (let a = 6; a >= 0; a--) for (let b = a; b >= 0; b--) all.push(`${a}-${b}`);
    return `<h2>${esc(t("rules.ranking_kozel"))}</h2><div class="ranking western">${all.map((x) => tileFigure(x, "western")).join("")}</div>`;
  }
  // the wall game ranks the two commanders first among the military tiles
  const military = rulesId === "tiengow_wall" ? ["4-2", "2-1", ...MILITARY_ORDER.filter((x) => x !== "4-2" && x !== "2-1")] : MILITARY_ORDER;
  return `<h2>${esc(t("rules.ranking_civil"))}</h2><div class="ranking">${CIVIL_ORDER.map((x) => tileFigure(x)).join("")}</div>
    <h2>${esc(t("rules.ranking_military"))}</h2><div class="ranking">${military.map((x) => tileFigure(x)).join("")}</div>`;
}

export async function showRules(rulesId) {
  const { rules } = await loadCatalog();
  const ids = rules.map((r) => r.id);
  const id = ids.includes(rulesId) ? rulesId : null;
  document.title = `${id ? t("rules.of", { game: gameTitle(id) }) : t("rules.title")} · tilehouse`;
  const tabs = `<nav class="ruletabs" aria-label="${esc(t("rules.title"))}">${ids.map((x) => `<a href="/#/rules/${x}" class="button small${x === id ? " current" : ""}" ${x === id ? 'aria-current="page"' : ""}>${esc(gameTitle(x))}</a>`).join("")}</nav>`;
  if (!id) {
    app.innerHTML = `${topBar("rules")}<main id="main"><section class="panel rules"><h1>${esc(t("rules.title"))}</h1>${tabs}
      ${ids.map((x) => `<h2><a href="/#/rules/${x}">${esc(gameTitle(x))}</a></h2><p>${esc(t(`rules.${x}.summary`))}</p>`).join("")}</section></main>`;
    return;
  }
  app.innerHTML = `${topBar("rules")}<main id="main"><article class="panel rules" aria-labelledby="rules-title"><h1 id="rules-title">${esc(t("rules.of", { game: gameTitle(id) }))}</h1>${tabs}
    <p class="summary">${esc(t(`rules.${id}.summary`))}</p><p><a class="button primary" href="/#/" id="playthis">${esc(t("rules.play", { game: gameTitle(id) }))}</a></p>
    ${ranking(id)}<h2>${esc(t("rules.full"))}</h2><div id="fullrules" class="fullrules"><p class="muted">${esc(t("rules.loading"))}</p></div></article></main>`;
  const r = await fetch(`/rules/${id}/text?lang=${encodeURIComponent(currentLang())}`, { cache: "no-cache" });
  const md = await r.text();
  const lang = r.headers.get("Content-Language") || "en";
  const box = document.getElementById("fullrules");
  if (!box) return; // the player went elsewhere meanwhile
  box.innerHTML = `${lang !== currentLang() ? `<p class="note">${esc(t("rules.english_only"))}</p>` : ""}<div lang="${esc(lang)}">${renderMarkdown(md)}</div>`;
}
