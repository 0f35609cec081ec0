// Every player-facing string of the client comes from one catalog per language: static/i18n/<lang>.json,
// a flat object of keys ("table.your_turn") to strings with {name} placeholders. Plural forms are separate
// keys ending in .zero/.one/.two/.few/.many/.other, picked with Intl.PluralRules from params.count.
// en.json is the reference; a key missing from a catalog falls back to English, then to the key itself.

/** The languages offered, each with its name in itself (the switcher shows these). */
export const LANGS = [
  ["en", "English"], ["zh-Hant", "繁體中文"], ["zh-Hans", "简体中文"], ["ru", "Русский"], ["uk", "Українська"],
  ["da", "Dansk"], ["es", "Español"], ["cs", "Čeština"], ["sr-Latn", "Srpski (latinica)"], ["lv", "Latviešu"],
];
const CODES = LANGS.map(([code]) => code);
const STORE = "tilehouse.lang";

let lang = "en";
let messages = {};
let english = {};
let plurals = new Intl.PluralRules("en");

/** The catalog language closest to a browser language tag ("zh-TW" -> "zh-Hant", "sr" -> "sr-Latn"). */
export function matchLang(tag) {
  if (!tag) return null;
  const t = String(tag).toLowerCase();
  const exact = CODES.find((c) => c.toLowerCase() === t);
  if (exact) return exact;
  const [base, ...rest] = t.split("-");
  if (base === "zh") {
    // Traditional for Taiwan, Hong Kong, Macau and an explicit Hant script; Simplified otherwise
    return rest.some((x) => ["hant", "tw", "hk", "mo"].includes(x)) ? "zh-Hant" : "zh-Hans";
  }
  if (base === "sr") return rest.includes("cyrl") ? null : "sr-Latn";
  return CODES.find((c) => c.toLowerCase() === base) || null;
}

/** The language to start with: the one chosen here before, else the browser's first that we have. */
export function preferredLang() {
  let saved = null;
  try {
    saved = localStorage.getItem(STORE);
  } catch {
    saved = null;
  }
  if (saved && CODES.includes(saved)) return saved;
  const wanted = (navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language]);
  for (const tag of wanted) {
    const m = matchLang(tag);
    if (m) return m;
  }
  return "en";
}

async function fetchCatalog(code) {
  const r = await fetch(`/static/i18n/${code}.json`, { cache: "no-cache" });
  if (!r.ok) throw new Error(`no catalog for ${code}`);
  return r.json();
}

/** Load a language (and English beneath it), set <html lang>, and remember the choice if `remember`. */
export async function setLang(code, remember = false) {
  const want = CODES.includes(code) ? code : "en";
  if (!Object.keys(english).length) english = await fetchCatalog("en");
  messages = want === "en" ? english : await fetchCatalog(want).catch(() => english);
  lang = messages === english ? "en" : want;
  plurals = new Intl.PluralRules(lang);
  document.documentElement.lang = lang;
  if (remember) {
    try {
      localStorage.setItem(STORE, lang);
    } catch {
      // private mode: the choice lasts for this page only
    }
  }
  return lang;
}

export const currentLang = () => lang;

function lookup(key) {
  if (Object.prototype.hasOwnProperty.call(messages, key)) return messages[key];
  if (Object.prototype.hasOwnProperty.call(english, key)) return english[key];
  return undefined;
}

/** Whether the catalog (or English) has this key: for names that may or may not be translated. */
export function has(key) {
  return lookup(key) !== undefined;
}

/**
 * The text of a key in the current language, its {placeholders} filled from params. With a numeric
 * params.count and plural keys (key.one, key.other, ...), the form for that number in this language.
 */
export function t(key, params = {}) {
  let text;
  if (typeof params.count === "number") {
    const form = plurals.select(params.count);
    text = lookup(`${key}.${form}`);
    if (text === undefined) text = lookup(`${key}.other`);
  }
  if (text === undefined) text = lookup(key);
  if (text === undefined) return key;
  return text.replace(/\{(\w+)\}/g, (all, name) => (params[name] === undefined || params[name] === null ? all : String(params[name])));
}

/** A number the way this language writes it (decimal comma in most of them). */
export function num(x, digits = 0) {
  return new Intl.NumberFormat(lang, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(x);
}

/** A list of names joined the way this language joins them ("A, B and C"). */
export function list(items) {
  try {
    return new Intl.ListFormat(lang, { style: "long", type: "conjunction" }).format(items.map(String));
  } catch {
    return items.join(", ");
  }
}
