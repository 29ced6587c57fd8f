// The standalone pages' kit (the standings, the prize list, the round sheet, the pairing page:
// pages without common.js): the language the reader chose, the page's words in it, the
// switch, a load that a burst of news makes run once more (not once per message), and the
// station's stream. Each page keeps its own words (TEXT) and its own drawing.
"use strict";
window.QZP = (function () {
  // ?lang= first, else the language chosen on any page (common.js keeps it as qz.lang)
  function initialLang() {
    let saved = "";
    try { saved = localStorage.getItem("qz.lang") || ""; } catch (e) { /* private mode */ }
    const asked = new URLSearchParams(location.search).get("lang") || saved;
    return asked.toLowerCase().startsWith("en") ? "en" : "zh-CN";
  }
  // t(key, vars): the page's word for key in the language `lang()` says, {vars} filled in
  function words(TEXT, lang) {
    return (key, vars) => {
      const table = TEXT[lang()];
      let s = table[key] !== undefined ? table[key] : key;
      for (const [k, v] of Object.entries(vars || {})) s = s.split("{" + k + "}").join(String(v));
      return s;
    };
  }
  // the other language: kept for every page (qz.lang) and in this page's address
  function switchLang(lang) {
    const next = lang === "en" ? "zh-CN" : "en";
    try { localStorage.setItem("qz.lang", next); } catch (e) { /* private mode */ }
    const url = new URL(location.href);
    url.searchParams.set("lang", next === "en" ? "en" : "zh");
    history.replaceState(null, "", url);
    return next;
  }
  // load(): runs `fetchAndDraw`; asked again while it runs, it runs once more after
  function coalesced(fetchAndDraw) {
    let loading = null;
    let again = false;
    function load() {
      if (loading) { again = true; return loading; }
      loading = (async () => {
        try { await fetchAndDraw(); } finally {
          loading = null;
          if (again) { again = false; load(); }
        }
      })();
      return loading;
    }
    return load;
  }
  // the public stream: `on` maps an event name to its handler; `conn` shows while it is cut
  function stream(on, conn) {
    const es = new EventSource("/api/stream");
    es.addEventListener("open", () => { conn.hidden = true; });
    es.addEventListener("error", () => { conn.hidden = false; });
    for (const [name, handler] of Object.entries(on)) {
      es.addEventListener(name, (ev) => { if (name === "hello") conn.hidden = true; handler(ev); });
    }
    return es;
  }
  return { initialLang, words, switchLang, coalesced, stream };
})();
