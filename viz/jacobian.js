// viz/jacobian.js: viz.forward_vs_reverse's player. One Jacobian computed both ways, side by side on one
// clock: forward mode (one pass per input, the tangent climbing the graph, a column per pass) beside reverse
// mode (a forward pass for the values, then one backward pass per output, a row per pass), with the running
// counts of passes and op evaluations. Every label is set as text (never parsed as HTML); the graph is the
// SVG viz.draw made (its labels escaped there), parsed as SVG and given to each side as a copy.

const PROJECTOR_PX = 18; // full screen: no text of the picture under this many pixels (the back row reads it)
const SIDES = [
  ["forward", "Forward mode · jacfwd", "one pass per input, the tangent travels forward; each pass fills a column",
   "tangent rules"],
  ["reverse", "Reverse mode · jacrev", "one forward pass for the values, then one backward pass per output; each fills a row",
   "backward rules"],
];

function h(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined) el.textContent = text;
  return el;
}

function darkTheme() {
  const body = document.body;
  const lab = body && body.getAttribute("data-jp-theme-light");
  if (lab === "true" || lab === "false") return lab === "false";
  if (body && body.classList.contains("vscode-dark")) return true;
  if (body && body.classList.contains("vscode-light")) return false;
  return !!(window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);
}

function parseSvg(text) {
  if (!text) return null;
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.nodeName !== "svg" || doc.getElementsByTagName("parsererror").length) return null;
  for (const el of svg.querySelectorAll("[id]")) el.removeAttribute("id"); // two copies on one page
  for (const s of svg.querySelectorAll("script, foreignObject")) s.remove();
  return svg;
}

// Graphviz placed each row by its own, narrower text widths (viz/metrics.py reserves the browser's): each row
// is centred in its box, as viz's rows all are.
function centreTexts(svg) {
  for (const g of svg.querySelectorAll("g.node")) {
    const nums = [...g.querySelectorAll("polygon, path")].map((e) => e.getAttribute("points") || e.getAttribute("d") || "").join(" ").match(/-?[\d.]+/g);
    const xs = (nums || []).filter((_, i) => i % 2 === 0).map(Number);
    const title = g.querySelector("title");
    if (!xs.length || (title && title.textContent === "legend")) continue; // the legend's rows are left-aligned
    for (const t of g.querySelectorAll("text")) {
      t.setAttribute("text-anchor", "middle");
      t.setAttribute("x", String((Math.min(...xs) + Math.max(...xs)) / 2));
    }
  }
}

function plural(k, one, many) { return k + " " + (k === 1 ? one : many); }

class Side {
  constructor(race, spec) {
    const [name, title, sub, rules] = spec;
    this.race = race;
    this.name = name;
    this.rules = rules;
    this.steps = race.data[name] || [];
    this.total = this.steps.length ? this.steps[this.steps.length - 1] : null;
    this.el = h("section", "mgj-side mgj-" + name);
    this.el.append(h("h3", "mgj-title", title), h("div", "mgj-sub", sub));
    const counts = h("div", "mgj-counts");
    this.passes = h("span", "mgj-passes");
    this.evals = h("span", "mgj-evals");
    this.split = h("span", "mgj-split");
    this.done = h("span", "mgj-done");
    this.done.setAttribute("data-mg-text", " · fewer op evaluations: the winner"); // shown by the CSS
    counts.append(this.passes, this.evals, this.split, this.done);
    this.now = h("div", "mgj-now");
    this.now.setAttribute("aria-live", "polite");
    this.stage = h("div", "mgj-stage");
    this.svg = parseSvg(race.model.get("svg"));
    if (this.svg) this.stage.appendChild(document.importNode(this.svg, true));
    else this.stage.appendChild(h("div", "mgj-hint", "The graph is not drawn here (no Graphviz in Python)."));
    this.svg = this.stage.querySelector("svg");
    if (this.svg) centreTexts(this.svg);
    this.nodes = {};
    this.edges = []; // [g, the node the edge leaves]: a node's edges lead to its inputs
    if (this.svg) {
      for (const g of this.svg.querySelectorAll("g.node, g.edge")) {
        const t = g.querySelector("title"), name = t ? t.textContent.trim() : "";
        if (g.classList.contains("node")) this.nodes[name] = g;
        else this.edges.push([g, name.split("->")[0]]);
      }
    }
    this.table = this.matrix();
    const body = h("div", "mgj-body");
    const right = h("div", "mgj-right");
    right.append(this.now, this.table);
    body.append(this.stage, right);
    this.el.append(counts, body);
  }

  matrix() {
    const data = this.race.data;
    const table = h("table", "mgj-matrix");
    table.setAttribute("aria-label", "The Jacobian, " + data.outputs.length + " × " + data.inputs.length);
    const head = h("tr");
    head.appendChild(h("th", "mgj-corner", "J"));
    data.inputs.forEach((name) => head.appendChild(h("th", "mgj-col", name)));
    table.appendChild(head);
    this.cells = data.outputs.map((name) => {
      const tr = h("tr");
      tr.appendChild(h("th", "mgj-row", name));
      const row = data.inputs.map(() => tr.appendChild(h("td", "mgj-cell", "·")));
      table.appendChild(tr);
      return row;
    });
    return table;
  }

  show(t) {
    if (!this.steps.length) return;
    const k = Math.min(t, this.steps.length - 1);
    const step = this.steps[k];
    const finished = t >= this.steps.length - 1;
    const m = this.race.data.outputs.length, n = this.race.data.inputs.length;
    const of = this.name === "forward" ? n : m;
    this.passes.textContent = (this.name === "reverse" && step.pass === 0 ? "forward pass for the values · passes done "
      : "passes done ") + step.passes + " / " + of; // one text each, as viz/locale's catalog holds them
    this.evals.textContent = plural(step.values + step.rules, "op evaluation", "op evaluations");
    this.split.textContent = "(" + step.values + " values + " + step.rules + " " + this.rules + ")";
    this.done.textContent = finished ? "done at step " + (this.steps.length - 1) : "";
    this.now.textContent = step.text;
    this.el.classList.toggle("mgj-finished", finished);
    // the graph: the node running now, and those this pass has done
    const current = new Set(step.ids), visited = new Set();
    for (let j = k - 1; j >= 0 && this.steps[j].pass === step.pass; j--) this.steps[j].ids.forEach((i) => visited.add(i));
    for (const [id, g] of Object.entries(this.nodes)) {
      g.classList.toggle("mgj-lit", current.has(id) && !finished);
      g.classList.toggle("mgj-visited", (visited.has(id) && !current.has(id)) || (finished && current.has(id)));
    }
    // the edges of the node running now: the tangents it reads (forward), the gradients it sends (reverse)
    for (const [g, src] of this.edges) g.classList.toggle("mgj-flow", current.has(src) && !finished);
    // the matrix: filled columns (forward) or rows (reverse) so far; the one in progress marked
    const filled = {};
    for (let j = 0; j <= k; j++) if (this.steps[j].fill !== null && this.steps[j].fill !== undefined) filled[this.steps[j].fill] = this.steps[j].numbers;
    const active = finished || step.kind === "result" || step.pass === 0 ? -1 : step.pass - 1;
    this.cells.forEach((row, r) => row.forEach((cell, c) => {
      const line = this.name === "forward" ? c : r, at = this.name === "forward" ? r : c;
      const numbers = filled[line];
      cell.textContent = numbers ? numbers[at] : "·";
      cell.classList.toggle("mgj-filled", !!numbers);
      cell.classList.toggle("mgj-active", line === active);
      cell.classList.toggle("mgj-new", !!numbers && step.fill === line && !finished);
    }));
  }
}

class Race {
  constructor(model, el) {
    this.model = model;
    this.data = model.get("data") || {};
    this.full = false;
    this.timer = null;
    const root = h("div", "mgj");
    root.tabIndex = 0;
    this.root = root;
    this.theme();
    const bar = h("div", "mgj-bar");
    const button = (cls, label, text, fn) => {
      const b = h("button", "mgj-btn " + cls, text);
      b.type = "button"; b.title = label; b.setAttribute("aria-label", label);
      b.addEventListener("click", fn);
      bar.appendChild(b);
      return b;
    };
    this.play = button("mgj-play", "Play (space)", "Play", () => this.toggle());
    button("mgj-first", "First step (Home)", "|◀", () => this.go(0));
    button("mgj-prev", "Previous step (←)", "◀", () => this.go(this.t - 1));
    button("mgj-next", "Next step (→)", "▶", () => this.go(this.t + 1));
    button("mgj-last", "Last step (End)", "▶|", () => this.go(this.last));
    this.slider = h("input", "mgj-slider");
    this.slider.type = "range"; this.slider.min = "0"; this.slider.setAttribute("aria-label", "step");
    this.slider.addEventListener("input", () => this.go(+this.slider.value));
    bar.appendChild(this.slider);
    this.count = h("span", "mgj-count");
    bar.appendChild(this.count);
    button("mgj-full", "Full screen (f)", "Full screen", () => this.fullscreen());
    this.verdict = h("div", "mgj-verdict");
    this.verdict.setAttribute("aria-live", "polite");
    const sides = h("div", "mgj-sides");
    this.sides = SIDES.map((spec) => new Side(this, spec));
    this.sides.forEach((s) => sides.appendChild(s.el));
    if (this.data.title) root.appendChild(h("div", "mgj-heading", this.data.title));
    root.append(bar, this.verdict, sides);
    this.last = Math.max(0, ...this.sides.map((s) => s.steps.length - 1));
    this.slider.max = String(this.last);
    root.addEventListener("keydown", (e) => this.key(e));
    this.onFull = () => { this.full = document.fullscreenElement === root; root.classList.toggle("mgj-full", this.full); this.fit(); };
    this.onResize = () => this.fit();
    document.addEventListener("fullscreenchange", this.onFull);
    window.addEventListener("resize", this.onResize);
    this.onFrame = () => this.go(model.get("frame") || 0, false);
    model.on("change:frame", this.onFrame);
    el.appendChild(root);
    this.t = -1;
    this.go(model.get("frame") || 0, false);
    requestAnimationFrame(() => this.fit());
  }

  theme() {
    const apply = () => { const dark = darkTheme(); this.root.classList.toggle("mgj-dark", dark); this.root.classList.toggle("mgj-light", !dark); };
    apply();
    if (window.MutationObserver && document.body) {
      this.observer = new MutationObserver(apply);
      this.observer.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "class"] });
    }
    if (window.matchMedia) {
      this.media = window.matchMedia("(prefers-color-scheme: dark)");
      if (this.media.addEventListener) this.media.addEventListener("change", apply);
      this.applyTheme = apply;
    }
  }

  go(t, sync = true) {
    t = Math.max(0, Math.min(this.last, Math.round(+t || 0)));
    if (t === this.t) return;
    this.t = t;
    this.slider.value = String(t);
    this.count.textContent = "step " + t + " / " + this.last;
    this.sides.forEach((s) => s.show(t));
    const ended = this.sides.map((s) => t >= s.steps.length - 1);
    const winner = this.data.winner;
    this.verdict.textContent = ended.every(Boolean) ? this.data.verdict
      : ended.some(Boolean) ? (ended[0] ? "Forward mode" : "Reverse mode") + " has its whole Jacobian; the other side is still running."
      : "Both sides compute the same Jacobian; each step is one op (or a seed, or a pass's result).";
    this.sides.forEach((s) => s.el.classList.toggle("mgj-winner", ended.every(Boolean) && s.name === winner));
    this.root.classList.toggle("mgj-ended", ended.every(Boolean));
    if (sync && this.model.get("frame") !== t) { this.model.set("frame", t); this.model.save_changes(); }
    if (t >= this.last) this.stop();
  }

  toggle() { if (this.timer) this.stop(); else this.start(); }

  start() {
    if (this.t >= this.last) this.go(0);
    this.play.textContent = "Pause";
    this.timer = setInterval(() => this.go(this.t + 1), 700);
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.play.textContent = "Play";
  }

  key(e) {
    const keys = { ArrowRight: () => this.go(this.t + 1), ArrowLeft: () => this.go(this.t - 1), Home: () => this.go(0),
                   End: () => this.go(this.last), " ": () => this.toggle(), f: () => this.fullscreen() };
    if (keys[e.key] && !(e.target instanceof HTMLInputElement && e.key !== " " && e.key !== "f")) {
      e.preventDefault();
      keys[e.key]();
    }
  }

  fullscreen() {
    if (document.fullscreenElement === this.root) document.exitFullscreen().catch(() => {});
    else if (this.root.requestFullscreen) this.root.requestFullscreen().catch(() => {});
  }

  // both pictures at one scale: as large as a side's width allows (at most 1.6x inline), in full screen never
  // smaller than PROJECTOR_PX for the smallest node text; the matrix goes beside the picture where it fits, else under it
  fit() {
    const shown = this.sides.filter((s) => s.svg && s.svg.viewBox && s.svg.viewBox.baseVal && s.svg.viewBox.baseVal.width);
    if (!shown.length) return;
    let scale = this.full ? 3 : 1.6, floor = 0;
    for (const side of shown) {
      const box = side.svg.viewBox.baseVal, room = side.el.clientWidth - 24;
      scale = Math.min(scale, room / box.width, (this.full ? window.innerHeight * 0.6 : 360) / box.height);
      for (const t of side.svg.querySelectorAll("g.node text")) {
        floor = Math.max(floor, (PROJECTOR_PX / (parseFloat(t.getAttribute("font-size")) || 14)) * 1.02); // a margin over rounding
      }
    }
    if (this.full) scale = Math.max(scale, floor);
    for (const side of shown) {
      const box = side.svg.viewBox.baseVal, width = box.width * scale;
      side.svg.setAttribute("width", width.toFixed(1));
      side.svg.setAttribute("height", (box.height * scale).toFixed(1));
      side.stage.style.flexBasis = Math.ceil(width + 4) + "px";
    }
  }

  destroy() {
    this.stop();
    this.model.off("change:frame", this.onFrame);
    document.removeEventListener("fullscreenchange", this.onFull);
    window.removeEventListener("resize", this.onResize);
    if (this.observer) this.observer.disconnect();
    if (this.media && this.media.removeEventListener) this.media.removeEventListener("change", this.applyTheme);
  }
}

function render({ model, el }) {
  const race = new Race(model, el);
  const data = model.get("data") || {};
  if (data.i18n && typeof mgI18n === "function") mgI18n(el, data.i18n); // viz/i18n.js, appended by jacobian.py
  return () => race.destroy();
}

export default { render };
