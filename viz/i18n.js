// viz/i18n.js: the page's words in the learner's language (viz.set_language, MINIGRAD_LANG, the locale;
// viz/i18n.py). Appended to a player's front end only when it speaks other than English (viz/player.py
// front_ends). The catalog travels in the payload as data ({exact, templates}: viz/locale/<lang>.po), so an
// exported page keeps the language it was exported in. Every text node, title and aria-label under the
// player is looked up once when it appears or changes: node names, code and values are in no catalog and stay.

function mgI18n(root, cat) {
  if (!cat || !root) return;
  const templates = (cat.templates || []).map(([re, out]) => [new RegExp(re, "s"), out]);
  const tr = (text) => {
    const key = text.trim();
    if (!key) return text;
    let out = cat.exact[key];
    if (out === undefined) {
      for (const [re, to] of templates) {
        const m = key.match(re);
        if (m) { out = to.replace(/\$(\d+)/g, (_, i) => tr(m[Number(i)] || "")); break; }
      }
    }
    return out === undefined ? text : text.replace(key, out);
  };
  const attrs = ["title", "aria-label", "placeholder", "data-mg-text"]; // data-mg-text: a text CSS shows
  const one = (n) => {
    if (n.nodeType === 3) {
      const t = tr(n.data);
      if (t !== n.data) n.data = t;
    } else if (n.nodeType === 1) {
      for (const a of attrs) {
        const v = n.getAttribute(a);
        if (v) { const t = tr(v); if (t !== v) n.setAttribute(a, t); }
      }
      if (n.tagName === "SCRIPT" || n.tagName === "STYLE") return;
      for (const c of n.childNodes) one(c);
    }
  };
  root.setAttribute("lang", cat.lang === "zh" ? "zh-CN" : cat.lang);
  one(root);
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "childList") r.addedNodes.forEach(one);
      else one(r.target);
    }
  }).observe(root, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: attrs });
  if (typeof document !== "undefined" && !document.documentElement.lang) document.documentElement.lang = root.lang;
}

if (typeof Player !== "undefined") {
  const I18N_BUILD = Player.prototype.build;
  Player.prototype.build = function (host) {
    I18N_BUILD.call(this, host);
    if (this.data.i18n) mgI18n(this.root, this.data.i18n);
  };
}
