// viz/player.js: the front end of viz.animate (backward), viz.record (forward) and of viz.draw
// where Python has no Graphviz. Graphviz lays the graph out once (in Python, or in the page with the
// WebAssembly Graphviz viz ships when Python has none: viz/layout.js); a frame only switches classes and
// texts on that one SVG. The payload is the run order with one small record per step; the state at
// step k (done, waiting, labels so far) is derived here, never shipped per frame.

const SPEEDS = [0.25, 0.5, 1, 2, 4, 8];
const STEPS_PER_SECOND = 1.25; // at speed 1
const PX_PER_PT = 4 / 3;
const MIN_TEXT_PX = 10; // no text of the picture is shown smaller at the starting zoom
const PROJECTOR_PX = 18; // nor, in the player's own full screen (the projector), smaller than this
const FIT_WHOLE_FROM = 0.8; // the whole graph is shown when it fits at this zoom or more
const ZOOM_MAX = 2;
const NARROW_PX = 1100; // below this width the side panel goes under the picture
const PAD = 14; // px around the picture inside the stage
const ICONS = {
  first: "M3 2h2v12H3zM14 2v12L6 8z",
  prev: "M12 2v12L4 8z",
  play: "M4 2l10 6-10 6z",
  pause: "M4 2h3v12H4zM9 2h3v12H9z",
  next: "M4 2v12l8-6z",
  last: "M11 2h2v12h-2zM2 2v12l8-6z",
  full: "M2 2h5v2H4v3H2zM9 2h5v5h-2V4H9zM2 9h2v3h3v2H2zM12 9h2v5H9v-2h3z",
};
// [class, text, shown when] for the legend: only what this player can show
const LEGEND = {
  backward: [
    ["mg-k-current", "runs now", () => true], ["mg-k-waiting", "waiting: some gradients arrived", (p) => p.has.waiting],
    ["mg-k-done", "done (step number)", () => true], ["mg-k-pending", "not reached yet", () => true],
    ["mg-k-sum", "gradients arrived / expected", (p) => p.has.summing], ["mg-k-freed", "saved values freed", (p) => p.has.freed],
    ["mg-k-hook", "hook fired", (p) => p.has.hooks], ["mg-k-hooked", "value a hook changed", (p) => p.has.relabel],
    ["mg-k-module", "module: click to open", (p) => p.has.boxes],
  ],
  forward: [["mg-k-new", "created in this step", () => true], ["mg-k-born", "created earlier", () => true]],
};

function h(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

function icon(name) {
  // parsed as HTML, so the SVG gets its namespace without this file naming it
  const span = h("span", "mg-icon");
  span.innerHTML = '<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">' +
    '<path fill="currentColor" d="' + ICONS[name] + '"></path></svg>';
  return span;
}

function push(map, key, value) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function lastUpTo(list, k) {
  // list of [step, value] in step order: the last one at or before k
  let found;
  if (list) for (const item of list) { if (item[0] <= k) found = item; else break; }
  return found;
}

// -- the theme: JupyterLab's, VS Code's, else the system's (prefers-color-scheme) --
function darkTheme() {
  const body = document.body;
  const lab = body && body.getAttribute("data-jp-theme-light");
  if (lab === "true" || lab === "false") return lab === "false";
  if (body && body.classList.contains("vscode-dark")) return true;
  if (body && body.classList.contains("vscode-light")) return false;
  return !!(window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);
}

// -- measuring the SVG (decorating it, where the page lays it out, is viz/layout.js's) --
// A widget may be drawn before its output is on the page, where nothing can be measured (getBBox gives
// zeros): wait until the page lays the element out.
function laidOut(el) {
  return new Promise((resolve) => {
    const check = () => (el.isConnected && el.getClientRects().length > 0 ? resolve() : requestAnimationFrame(check));
    check();
  });
}

function bbox(el) {
  try { return el.getBBox(); } catch (err) { return null; }
}

// Graphviz placed each row by its own, narrower text widths (viz/metrics.py reserves the browser's): every
// row is centred in its box (viz's rows all are), and one that still would not fit is narrowed to fit.
function fitTexts(svg) {
  for (const g of svg.querySelectorAll("g.node")) {
    const border = g.querySelector(".mg-border");
    const box = border && bbox(border);
    if (!box || g.getAttribute("data-n") === "legend") continue;
    for (const t of g.querySelectorAll("text")) {
      if (t.closest(".mg-stepbadge, .mg-arrbadge")) continue; // an empty placeholder too: the player fills it
      t.setAttribute("text-anchor", "middle");
      t.setAttribute("x", String(box.x + box.width / 2));
      if (t.getComputedTextLength() > box.width - 6) {
        t.setAttribute("textLength", String(box.width - 6));
        t.setAttribute("lengthAdjust", "spacingAndGlyphs");
      }
    }
  }
}

// Module labels sit at a corner of their frame where no edge passes, on a chip of the background.
function placeClusterLabels(svg) {
  const paths = [...svg.querySelectorAll("g.edge path")].map((p) => [p, bbox(p)]);
  const nodes = [...svg.querySelectorAll("g.node")].map(bbox).filter(Boolean);
  const overlaps = (a, b) => !(b.x > a.x + a.width || b.x + b.width < a.x || b.y > a.y + a.height || b.y + b.height < a.y);
  const placed = []; // the chips of the labels placed so far: a nested module's frame starts just inside its parent's
  for (const g of svg.querySelectorAll("g.cluster")) {
    const frame = g.querySelector("path, polygon");
    const texts = [...g.querySelectorAll("text")]; // Graphviz puts them in the tooltip's <a> when there is one
    const box = frame && bbox(frame);
    if (!box || !texts.length) continue;
    const label = texts.map(bbox).filter(Boolean);
    if (!label.length) continue;
    const lx = Math.min(...label.map((r) => r.x)), ly = Math.min(...label.map((r) => r.y));
    const lw = Math.max(...label.map((r) => r.x + r.width)) - lx, lh = Math.max(...label.map((r) => r.y + r.height)) - ly;
    const crossed = (x, y) => {
      const hit = { x: x - 3, y: y - 2, width: lw + 6, height: lh + 4 };
      if (nodes.some((r) => overlaps(hit, r)) || placed.some((r) => overlaps(hit, r))) return true;
      for (const [p, r] of paths) {
        if (!r || !overlaps(hit, r)) continue;
        const length = p.getTotalLength();
        for (let s = 0; s <= length; s += 4) {
          const q = p.getPointAtLength(s);
          if (q.x >= hit.x && q.x <= hit.x + hit.width && q.y >= hit.y && q.y <= hit.y + hit.height) return true;
        }
      }
      return false;
    };
    const spots = [[lx, ly], [box.x + 6, box.y + 3], [box.x + box.width - lw - 6, box.y + 3],
      [box.x + 6, box.y + box.height - lh - 3], [box.x + box.width - lw - 6, box.y + box.height - lh - 3],
      // clear of the badges on the corners of the boxes inside
      [box.x - lw - 12, box.y + 3], [box.x + box.width + 12, box.y + 3], [box.x + 6, box.y - lh - 4]];
    const spot = spots.find(([x, y]) => !crossed(x, y)) || spots[0];
    const [dx, dy] = [spot[0] - lx, spot[1] - ly];
    for (const t of texts) {
      t.setAttribute("x", String(Number(t.getAttribute("x")) + dx));
      t.setAttribute("y", String(Number(t.getAttribute("y")) + dy));
      t.classList.add("mg-clabel");
    }
    const chip = document.createElementNS(svg.namespaceURI, "rect");
    chip.setAttribute("x", String(spot[0] - 3)); chip.setAttribute("y", String(spot[1] - 1));
    chip.setAttribute("width", String(lw + 6)); chip.setAttribute("height", String(lh + 2));
    chip.setAttribute("rx", "3");
    chip.setAttribute("class", "mg-lchip");
    placed.push({ x: spot[0] - 3, y: spot[1] - 1, width: lw + 6, height: lh + 2 });
    // drawn last, over the edges: readable even where one must pass
    const top = document.createElementNS(svg.namespaceURI, "g");
    top.setAttribute("class", "mg-clabels");
    top.append(chip, ...texts);
    (svg.querySelector("g.mg-graph") || svg.querySelector("g") || svg).appendChild(top);
  }
  growToFit(svg);
}

// Left to right, an edge's label fills the room between the ranks, where the badges beside a box's top corners
// would cover it: they sit on the box's top edge instead.
function badgesOnTop(svg) {
  for (const [sel, dx] of [[".mg-stepbadge", 18], [".mg-arrbadge", -18]]) {
    for (const b of svg.querySelectorAll(sel)) for (const e of b.children) {
      const [x, y] = e.tagName === "circle" ? ["cx", "cy"] : ["x", "y"];
      e.setAttribute(x, String(Number(e.getAttribute(x)) + dx));
      e.setAttribute(y, String(Number(e.getAttribute(y)) - 9));
    }
  }
}

// A label moved beside its frame may stick out of the picture: the picture grows to hold it.
function growToFit(svg) {
  const graph = svg.querySelector("g");
  const vb = svg.viewBox && svg.viewBox.baseVal;
  const b = graph && bbox(graph);
  if (!b || !vb || !vb.width) return;
  const moved = graph.transform.baseVal.consolidate();
  const m = moved ? moved.matrix : { a: 1, d: 1, e: 0, f: 0 };
  const x0 = Math.min(vb.x, b.x * m.a + m.e - 2), y0 = Math.min(vb.y, b.y * m.d + m.f - 2);
  const x1 = Math.max(vb.x + vb.width, (b.x + b.width) * m.a + m.e + 2);
  const y1 = Math.max(vb.y + vb.height, (b.y + b.height) * m.d + m.f + 2);
  if (x0 < vb.x || y0 < vb.y || x1 > vb.x + vb.width || y1 > vb.y + vb.height) {
    svg.setAttribute("viewBox", [x0, y0, x1 - x0, y1 - y0].join(" "));
  }
}

// The box the page scrolls the player in: the notebook's own scroller in JupyterLab and Notebook 7, else
// the nearest ancestor that does scroll. An ancestor whose height follows its content (an output area,
// which has overflow: auto for wide outputs) is no limit: its height is the player's own.
const SCROLLERS = ".jp-WindowedPanel-outer, .jp-NotebookPanel-notebook, .jp-Notebook";

// the element around el, out of a shadow root too (marimo shows widgets in one), and whether el is full screen
const up = (el) => el.parentElement || (el.getRootNode().host || null);
const isFull = (el) => el.getRootNode().fullscreenElement === el;

function scrollParent(el) {
  const notebook = el.parentElement && el.parentElement.closest(SCROLLERS);
  if (notebook && notebook.clientHeight > 0) return notebook;
  for (let p = up(el); p; p = up(p)) {
    const style = getComputedStyle(p);
    if (/(auto|scroll)/.test(style.overflowY) && p.clientHeight > 0 &&
        (p.scrollHeight > p.clientHeight + 1 || style.maxHeight !== "none")) return p;
  }
  return null;
}

class Player {
  constructor(model, host) {
    this.model = model;
    this.data = model.get("data") || { steps: [] };
    this.steps = this.data.steps || [];
    this.forward = this.data.mode === "forward";
    this.graphOnly = this.data.mode === "graph";
    this.k = Math.max(0, Number(model.get("frame")) || 0);
    this.timer = null;
    this.playing = false;
    this.speed = Number(model.get("speed")) || 1;
    this.userZoom = Number(model.get("zoom")) || 0; // 0: the automatic fit
    this.textScale = Number(model.get("text_scale")) || 1;
    this.layout = this.data.layout || {};
    this.dir = this.layout.rankdir || "TB";
    this.build(host);
    this.root.classList.toggle("mg-standalone", !!model.get("standalone"));
    // a kernel behind the page answers this at once; a page without one (exported by marimo) never does
    model.on("msg:custom", (m) => { if (m && m.type === "pong") this.alive = true; });
    model.send({ type: "ping" });
    this.theme();
    this.onFrame = () => { const f = Number(this.model.get("frame")); if (f !== this.k) this.go(f); };
    this.onSpeed = () => { this.speed = Number(this.model.get("speed")) || 1; if (this.speedBox) this.speedBox.value = String(this.speed); };
    this.onScene = () => this.reload();
    model.on("change:frame", this.onFrame);
    model.on("change:speed", this.onSpeed);
    model.on("change:data", this.onScene);
    this.onResize = () => { if (this.svg) this.fit(); };
    window.addEventListener("resize", this.onResize);
    document.addEventListener("fullscreenchange", this.onResize);
    if (window.ResizeObserver) {
      this.observer = new ResizeObserver(() => this.narrowCheck());
      this.observer.observe(this.root);
    }
    this.show();
  }

  reload() {
    this.data = this.model.get("data") || { steps: [] };
    this.steps = this.data.steps || [];
    this.layout = this.data.layout || {};
    this.slider.max = String(Math.max(this.steps.length - 1, 0));
    this.root.classList.remove("mg-busy");
    this.show();
  }

  theme() {
    const apply = () => {
      const dark = darkTheme();
      this.root.classList.toggle("mg-dark", dark);
      this.root.classList.toggle("mg-light", !dark);
    };
    apply();
    if (window.MutationObserver && document.body) {
      this.themeObserver = new MutationObserver(apply);
      this.themeObserver.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "class"] });
    }
    if (window.matchMedia) {
      this.media = window.matchMedia("(prefers-color-scheme: dark)");
      if (this.media.addEventListener) this.media.addEventListener("change", apply);
    }
  }

  // -- DOM --
  build(host) {
    const root = (this.root = h("div", "mg-player"));
    root.tabIndex = 0;
    root.setAttribute("data-lm-suppress-shortcuts", "true");
    root.setAttribute("role", "group");
    root.setAttribute("aria-label", this.graphOnly ? "autograd graph" : this.forward ? "forward graph player" : "backward pass player");
    root.style.setProperty("--mg-text-scale", String(this.textScale));
    root.mgPlayer = this;
    const bar = (this.bar = h("div", "mg-bar"));
    const button = (cls, title, content, fn) => {
      const b = h("button", "mg-btn " + cls);
      b.type = "button";
      b.title = title;
      b.setAttribute("aria-label", title);
      if (typeof content === "string") b.textContent = content;
      else b.appendChild(content);
      b.addEventListener("click", (e) => { e.stopPropagation(); fn(); root.focus({ preventScroll: true }); });
      return b;
    };
    if (!this.graphOnly) {
      bar.appendChild(button("mg-first", "First step (Home)", icon("first"), () => this.user(0)));
      bar.appendChild(button("mg-prev", "Step back (←)", icon("prev"), () => this.user(this.k - 1)));
      this.playBtn = button("mg-play", "Play (space)", icon("play"), () => this.toggle());
      bar.appendChild(this.playBtn);
      bar.appendChild(button("mg-next", "Step forward (→)", icon("next"), () => this.user(this.k + 1)));
      bar.appendChild(button("mg-last", "Last step (End)", icon("last"), () => this.user(this.steps.length - 1)));
      const slider = (this.slider = h("input", "mg-slider"));
      slider.type = "range";
      slider.min = "0";
      slider.max = String(Math.max(this.steps.length - 1, 0));
      slider.step = "1";
      slider.setAttribute("aria-label", "step");
      slider.addEventListener("input", () => this.user(Number(slider.value)));
      bar.appendChild(slider);
      this.counter = h("span", "mg-count");
      bar.appendChild(this.counter);
      const speed = (this.speedBox = h("select", "mg-speed"));
      speed.title = "Speed";
      speed.setAttribute("aria-label", "speed");
      const speeds = SPEEDS.includes(this.speed) ? SPEEDS : SPEEDS.concat([this.speed]);
      for (const s of speeds) {
        const o = h("option", null, s + "×");
        o.value = String(s);
        speed.appendChild(o);
      }
      speed.value = String(this.speed);
      speed.addEventListener("change", () => { this.speed = Number(speed.value) || 1; this.save("speed", this.speed); });
      bar.appendChild(speed);
    } else {
      this.slider = h("input");
    }
    const view = h("span", "mg-view");
    view.append(
      button("mg-z mg-zout", "Zoom out (−)", "−", () => this.setZoom(this.base / 1.25)),
      (this.zoomLabel = h("span", "mg-zlabel", "")),
      button("mg-z mg-zin", "Zoom in (+)", "+", () => this.setZoom(this.base * 1.25)),
      button("mg-z mg-fit", "Fit the graph (0)", "fit", () => this.setZoom(0)),
      button("mg-z mg-tsmall", "Smaller text", "A−", () => this.setText(this.textScale / 1.15)),
      button("mg-z mg-tbig", "Larger text", "A+", () => this.setText(this.textScale * 1.15)),
      (this.dirBtn = button("mg-z mg-dir", "Lay the graph out left to right", "", () => this.flip())),
      button("mg-z mg-full", "Full screen (f)", icon("full"), () => this.fullscreen()),
    );
    bar.appendChild(view);
    root.appendChild(bar);

    const main = (this.main = h("div", "mg-main"));
    this.stage = h("div", "mg-stage");
    this.stage.addEventListener("click", (e) => this.clicked(e));
    const side = (this.side = h("div", "mg-side"));
    this.title = h("div", "mg-title");
    this.lines = h("div", "mg-lines");
    this.lines.setAttribute("aria-live", "polite");
    side.append(this.title, this.lines);
    main.append(this.stage);
    if (!this.graphOnly) main.append(side);
    root.appendChild(main);
    this.legend = h("div", "mg-legend");
    root.appendChild(this.legend);
    root.addEventListener("keydown", (e) => this.key(e));
    host.appendChild(root);
  }

  fillLegend() {
    const legend = this.legend;
    legend.textContent = "";
    if (this.graphOnly) { legend.style.display = "none"; return; }
    for (const [cls, text, shown] of LEGEND[this.data.legend || (this.forward ? "forward" : "backward")]) {
      if (!shown(this)) continue;
      const item = h("span", "mg-key");
      item.append(h("span", "mg-chip " + cls), document.createTextNode(text));
      legend.appendChild(item);
    }
  }

  // -- the picture: Python's layout, else the WebAssembly Graphviz, else a hint --
  async show() {
    const token = (this.token = (this.token || 0) + 1);
    this.dirBtn.textContent = this.dir === "LR" ? "⇣ TB" : "⇢ LR";
    this.dirBtn.title = this.dir === "LR" ? "Lay the graph out top to bottom" : "Lay the graph out left to right";
    let svg = null;
    let hint = null;
    try {
      svg = await this.picture(this.dir);
    } catch (err) {
      hint = "viz: the graph could not be laid out in the browser (" + (err && err.message ? err.message : err) + ").";
    }
    if (token !== this.token) return;
    this.stage.textContent = "";
    if (svg) {
      this.stage.appendChild(svg);
    } else {
      const note = h("div", "mg-hint", hint || this.layout.hint ||
        "viz: no picture of the graph here: Python has no Graphviz (pip install pygraphviz) and this page has no " +
        "WebAssembly Graphviz. The steps are in the panel.");
      this.stage.appendChild(note);
    }
    this.index();
    this.derive();
    if (this.quizLoad) this.quizLoad();
    this.fillLegend();
    this.narrowCheck();
    this.go(this.k);
    this.fit();
  }

  async picture(dir) {
    const main = this.layout.rankdir || "TB";
    const ready = dir === main ? this.model.get("svg") : this.model.get("svg_alt");
    if (ready) {
      const holder = document.createElement("div");
      holder.innerHTML = ready;
      const svg = holder.querySelector("svg");
      if (svg) {
        this.stage.textContent = "";
        this.stage.appendChild(svg);
        await laidOut(this.root); // texts are measured below
        fitTexts(svg);
        if (/LR|RL/.test(dir)) badgesOnTop(svg);
        placeClusterLabels(svg);
        return svg;
      }
    }
    if (dir !== main && this.model.get("svg") && !this.lone()) {
      const alt = await this.ask({ type: "layout", rankdir: dir }, "change:svg_alt", () => this.model.get("svg_alt"));
      if (alt) return this.picture(dir);
    }
    if (!this.layout.dot) return null;
    if (!this.layOut) throw new Error("this page does not lay graphs out");
    return this.layOut(dir); // viz/layout.js: only where Python has no Graphviz
  }

  lone() {
    return this.model.get("standalone") || !this.alive;
  }

  ask(message, event, ready) {
    // one request to the kernel, answered by a trait change or a custom message (with a buffer)
    if (this.model.get("standalone")) return Promise.reject(new Error("no kernel to ask"));
    return new Promise((resolve, reject) => {
      const done = (msg, buffers) => {
        if (event === "msg:custom") {
          if (!msg || msg.type !== message.type) return;
          const buffer = buffers && buffers[0];
          resolve(msg.error ? Promise.reject(new Error(msg.error)) : new TextDecoder().decode(buffer));
        } else {
          resolve(ready());
        }
        this.model.off(event, done);
        clearTimeout(timer);
      };
      const timer = setTimeout(() => { this.model.off(event, done); reject(new Error("the kernel did not answer")); }, 30000);
      this.model.on(event, done);
      this.model.send(message);
    });
  }

  index() {
    this.svg = this.stage.querySelector("svg");
    this.nodes = new Map();
    this.edges = new Map();
    this.natural = null;
    if (!this.svg) return;
    this.svg.removeAttribute("width");
    this.svg.removeAttribute("height");
    const box = this.svg.viewBox && this.svg.viewBox.baseVal;
    this.natural = box && box.width ? [box.width * PX_PER_PT, box.height * PX_PER_PT] : [600, 400];
    let smallest = 99;
    for (const t of this.svg.querySelectorAll("text")) {
      const size = Number(t.getAttribute("font-size"));
      if (size) smallest = Math.min(smallest, size);
    }
    this.smallestPt = smallest === 99 ? 10 : smallest;
    const boxes = this.layout.boxes || {};
    for (const g of this.svg.querySelectorAll("g.node")) {
      const title = g.querySelector("title");
      const id = g.getAttribute("data-n") || (title && title.textContent);
      if (!id) continue;
      if (boxes[id]) { g.classList.add("mg-box"); g.setAttribute("data-scope", boxes[id]); }
      this.nodes.set(id, {
        g, cls: null, arr: null, note: null, base: g.getAttribute("class") || "node",
        stepText: g.querySelector(".mg-stepbadge text"),
        arrText: g.querySelector(".mg-arrbadge text"),
        noteEl: g.querySelector(".mg-note"),
      });
    }
    for (const g of this.svg.querySelectorAll("g.edge")) {
      const e = g.getAttribute("data-e");
      if (e == null) continue;
      this.edges.set(Number(e), {
        g, cls: null, text: null, label: g.querySelector(".mg-glabel"),
        src: g.getAttribute("data-src"), dst: g.getAttribute("data-dst"),
      });
    }
  }

  // -- the state, derived once from the run order --
  derive() {
    const steps = this.steps;
    if (this.forward) {
      this.appear = new Map();
      steps.forEach((s, i) => { for (const id of s.appear || []) if (!this.appear.has(id)) this.appear.set(id, i); });
      return;
    }
    this.has = { waiting: false, summing: false, freed: false, hooks: false, relabel: false,
                 boxes: Object.keys(this.layout.boxes || {}).length > 0 };
    this.runAt = new Map();
    this.sendAt = new Map();
    this.arrive = new Map();
    this.notes = new Map();
    this.freedAt = new Map();
    this.hookAt = new Map();
    for (const [id, text] of Object.entries(this.data.notes0 || {})) push(this.notes, id, [-1, text]);
    steps.forEach((s, i) => {
      if (s.kind !== "done") for (const id of s.ids || []) push(this.runAt, id, i);
      for (const [e, label, to] of s.sends || []) {
        if (e >= 0) push(this.sendAt, e, [i, label, false]);
        if (to) push(this.arrive, to, i);
      }
      // a hook changed what arrived: the edge now shows the value the node consumed
      for (const [e, label] of s.relabel || []) push(this.sendAt, e, [i, label, true]);
      for (const [id, text] of s.notes || []) push(this.notes, id, [i, text]);
      for (const id of s.freed || []) if (!this.freedAt.has(id)) this.freedAt.set(id, i);
      for (const id of s.hooks || []) push(this.hookAt, id, i);
      if (s.freed) this.has.freed = true;
      if (s.hooks) this.has.hooks = true;
      if (s.relabel) this.has.relabel = true;
    });
    for (const [id, got] of this.arrive) {
      if (got.length > 1) { this.has.summing = true; this.has.waiting = true; }
      const runs = this.runAt.get(id);
      if (runs && got.some((s) => s < runs[0])) this.has.waiting = true;
    }
    for (const [id, n] of this.nodes) {
      const runs = this.runAt.get(id);
      if (runs && n.stepText) n.stepText.textContent = String(runs[0]);
    }
  }

  nodeState(id, k) {
    const step = this.steps[k] || {};
    let cls;
    let arr = "";
    if (this.forward) {
      const at = this.appear.get(id) || 0;
      cls = at > k ? "mg-unborn" : at === k ? "mg-new" : "mg-born";
    } else {
      const runs = this.runAt.get(id);
      const got = this.arrive.get(id);
      let arrived = 0;
      if (got) for (const s of got) if (s <= k) arrived++;
      if (runs && runs.includes(k) && step.kind !== "done") cls = "mg-current";
      else if (runs && runs[runs.length - 1] <= k) cls = "mg-done";
      else cls = arrived > 0 ? "mg-waiting" : "mg-pending";
      if ((cls === "mg-waiting" || cls === "mg-current") && got && got.length > 1 && arrived > 0) {
        arr = arrived + "/" + got.length;
        cls += " mg-summing";
      }
      const freed = this.freedAt.get(id);
      if (freed !== undefined && freed <= k) cls += " mg-freed";
      const hooks = this.hookAt.get(id);
      if (hooks && hooks.includes(k)) cls += " mg-hookfired";
    }
    if (step.refs && step.refs.includes(id)) cls += " mg-ref";
    if (this.storyCls) cls = this.storyCls(id, k, cls);
    return [cls, arr];
  }

  // -- one frame --
  go(k) {
    const n = this.steps.length;
    if (!n) return;
    k = Math.max(0, Math.min(n - 1, Math.round(Number(k) || 0)));
    this.k = k;
    for (const [id, node] of this.nodes) {
      const [cls, arr] = this.nodeState(id, k);
      if (cls !== node.cls) { node.g.setAttribute("class", node.base + " " + cls); node.cls = cls; }
      if (arr !== node.arr && node.arrText) { node.arrText.textContent = arr; node.arr = arr; }
      if (node.noteEl && !this.forward) {
        const note = lastUpTo(this.notes.get(id), k);
        const text = note ? note[1] : "";
        if (text !== node.note) { node.noteEl.textContent = text; node.note = text; }
      }
    }
    for (const [e, edge] of this.edges) {
      let cls = "";
      let text = "";
      if (this.forward) {
        const at = Math.max(this.appear.get(edge.src) || 0, this.appear.get(edge.dst) || 0);
        cls = at > k ? "mg-unborn" : at === k ? "mg-new" : "mg-born";
      } else {
        const sent = lastUpTo(this.sendAt.get(e), k);
        if (sent) {
          cls = sent[2] ? "mg-sent mg-hooked" : sent[0] === k ? "mg-now" : "mg-sent";
          text = sent[1];
        }
      }
      if (cls !== edge.cls) { edge.g.setAttribute("class", "edge " + cls); edge.cls = cls; }
      if (text !== edge.text && edge.label) { edge.label.textContent = text; edge.text = text; }
    }
    this.panel(k);
    this.slider.value = String(k);
    if (this.counter) this.counter.textContent = "Step " + k + " / " + (n - 1);
    this.root.setAttribute("data-frame", String(k));
    if (this.quizShow) this.quizShow(k);
    this.follow(k);
  }

  panel(k) {
    const step = this.steps[k];
    this.title.textContent = step.title || "";
    const lines = this.lines;
    lines.textContent = "";
    for (const [kind, text] of step.lines || []) {
      const d = lines.appendChild(h("div", "mg-line mg-l-" + kind, text));
      if (this.storyLine) this.storyLine(d, kind, text);
    }
  }

  follow(k) {
    // keep the node of this step in view inside the stage (never scroll the page)
    const step = this.steps[k]; // none in a picture without steps (viz.draw laid out in the page)
    const id = step && (step.ids || [])[0];
    const node = id && this.nodes.get(id);
    if (!node || !this.stage.clientWidth) return;
    const s = this.stage.getBoundingClientRect();
    const r = node.g.getBoundingClientRect();
    const pad = 24;
    if (r.left < s.left + pad || r.right > s.right - pad) {
      this.stage.scrollLeft += (r.left + r.right) / 2 - (s.left + s.right) / 2;
    }
    if (r.top < s.top + pad || r.bottom > s.bottom - pad) {
      this.stage.scrollTop += (r.top + r.bottom) / 2 - (s.top + s.bottom) / 2;
    }
  }

  // -- controls --
  user(k) {
    this.pause();
    if (this.quizGate && this.quizGate(k)) return; // viz/quiz.js: a question before its step
    this.go(k);
    this.save("frame", this.k);
  }

  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }

  play() {
    if (this.steps.length < 2) return;
    if (this.k >= this.steps.length - 1) this.go(0);
    this.playing = true;
    this.root.classList.add("mg-playing");
    this.setIcon("pause", "Pause (space)");
    this.tick();
  }

  tick() {
    this.timer = setTimeout(() => {
      if (!this.playing) return;
      if (this.k >= this.steps.length - 1) { this.pause(); return; }
      if (this.quizGate && this.quizGate(this.k + 1)) { this.pause(); return; }
      this.go(this.k + 1);
      if (this.k >= this.steps.length - 1) this.pause();
      else this.tick();
    }, 1000 / (STEPS_PER_SECOND * this.speed));
  }

  pause() {
    clearTimeout(this.timer);
    this.timer = null;
    if (!this.playing) return;
    this.playing = false;
    this.root.classList.remove("mg-playing");
    this.setIcon("play", "Play (space)");
    this.save("frame", this.k);
  }

  setIcon(name, title) {
    this.playBtn.textContent = "";
    this.playBtn.appendChild(icon(name));
    this.playBtn.title = title;
    this.playBtn.setAttribute("aria-label", title);
  }

  save(key, value) {
    try {
      this.model.set(key, value);
      this.model.save_changes();
    } catch (err) {
      // a standalone page has no kernel to tell
    }
  }

  key(e) {
    const keys = { ArrowRight: () => this.user(this.k + 1), ArrowLeft: () => this.user(this.k - 1),
                   Home: () => this.user(0), End: () => this.user(this.steps.length - 1),
                   " ": () => this.toggle(), "+": () => this.setZoom(this.base * 1.25),
                   "=": () => this.setZoom(this.base * 1.25), "-": () => this.setZoom(this.base / 1.25),
                   "0": () => this.setZoom(0), f: () => this.fullscreen() };
    const fn = keys[e.key];
    const tag = e.target && e.target.tagName;
    if (!fn || tag === "SELECT" || tag === "INPUT" || (tag === "BUTTON" && e.key === " ")) return;
    e.preventDefault();
    e.stopPropagation();
    fn();
  }

  clicked(e) {
    if (this.quizClick && this.quizClick(e)) return;
    // a folded module opens where a kernel can lay the graph out again
    const g = e.target && e.target.closest && e.target.closest("g.mg-box");
    if (!g || this.lone()) return;
    e.stopPropagation();
    this.root.classList.add("mg-busy");
    this.model.send({ type: "expand", scope: g.getAttribute("data-scope") });
  }

  // -- zoom, text size, direction, full screen --
  scale(z) {
    if (!this.svg || !this.natural) return;
    this.zoom = Math.max(0.1, Math.min(4, z));
    this.svg.setAttribute("width", String(Math.round(this.natural[0] * this.zoom)));
    this.svg.setAttribute("height", String(Math.round(this.natural[1] * this.zoom)));
    this.zoomLabel.textContent = Math.round(this.zoom * 100) + "%";
    this.root.setAttribute("data-zoom", this.zoom.toFixed(3));
  }

  setZoom(z) {
    this.userZoom = z ? Math.max(0.1, Math.min(4, z)) : 0;
    this.save("zoom", this.userZoom);
    this.fit();
  }

  setText(s) {
    this.textScale = Math.max(0.8, Math.min(2.5, s));
    this.root.style.setProperty("--mg-text-scale", String(this.textScale));
    this.save("text_scale", this.textScale);
    this.fit();
  }

  room() {
    // the height the picture may take: what the page (or the screen, in full screen) shows of the player
    const full = isFull(this.root);
    const outer = full ? null : scrollParent(this.root);
    const pad = (el, a, b) => { const cs = getComputedStyle(el); return parseFloat(cs[a]) + parseFloat(cs[b]); };
    // a box that scrolls (marimo's output): its padding and the player's margins take room too
    const box = outer && !outer.matches(SCROLLERS) ? pad(outer, "paddingTop", "paddingBottom") + pad(this.root, "marginTop", "marginBottom") : 0;
    const view = full ? window.innerHeight : Math.min(window.innerHeight, outer ? outer.clientHeight - box : window.innerHeight);
    // under the picture, the panel keeps one height (30% of the view) whatever a step says, so that
    // stepping never moves the picture or pushes the legend off the screen; long steps scroll in it
    const below = this.narrow && !this.graphOnly ? Math.round(view * 0.3) : 0;
    this.side.style.height = below ? below + "px" : "";
    const chrome = this.bar.offsetHeight + this.legend.offsetHeight + below + (full ? 0 : 24);
    return [Math.max(this.stage.clientWidth - 2 * PAD, 100), Math.max(view - chrome - 2 * PAD, 200)];
  }

  fit() {
    if (!this.svg || !this.natural) return;
    const [w, hgt] = this.room();
    const [nw, nh] = this.natural;
    this.root.dataset.room = [w, hgt, nw, nh].map(Math.round).join(" ");
    const px = this.smallestPt * PX_PER_PT;
    const whole = Math.min(w / nw, hgt / nh);
    const full = isFull(this.root);
    let z = this.userZoom;
    // full screen is the projector: every text PROJECTOR_PX or more, the graph as large as the screen holds
    if (full && !z) z = Math.max(whole, (PROJECTOR_PX + 0.5) / px); // + rounding
    else if (!z) z = whole >= FIT_WHOLE_FROM ? Math.min(whole, ZOOM_MAX) : Math.min(Math.max(w / nw, MIN_TEXT_PX / px), ZOOM_MAX);
    this.base = z;
    z *= this.textScale; // A+ / A− scale the picture's text with the panel's
    this.root.dataset.fit = this.userZoom ? "user" : z <= whole * 1.001 ? "whole" : px * z >= PROJECTOR_PX ? "text" : "width";
    this.scale(z);
    // full screen: the stage takes the screen's height, and the picture sits in its middle (player.css)
    this.stage.style.height = Math.round((full ? hgt : Math.min(nh * this.zoom, hgt)) + 2 * PAD) + "px";
    this.root.classList.toggle("mg-fitted", !this.userZoom);
    this.follow(this.k);
  }

  narrowCheck() {
    // called when the player's box changes size: the notebook lays the output out after the player is
    // made, so the first fit may have seen another width; a new width fits again (a new height alone,
    // which fit() itself causes, does not)
    const width = this.root.clientWidth;
    const narrow = width > 0 && width < NARROW_PX;
    if (narrow !== this.narrow) {
      this.narrow = narrow;
      this.root.classList.toggle("mg-narrow", narrow);
    }
    if (width !== this.width) {
      this.width = width;
      if (this.svg) this.fit();
    }
  }

  flip() {
    this.dir = this.dir === "LR" ? "TB" : "LR";
    this.root.classList.add("mg-busy");
    this.show().finally(() => this.root.classList.remove("mg-busy"));
  }

  fullscreen() {
    if (isFull(this.root)) document.exitFullscreen();
    else if (this.root.requestFullscreen) this.root.requestFullscreen().catch(() => {});
  }

  destroy() {
    this.pause();
    this.model.off("change:frame", this.onFrame);
    this.model.off("change:speed", this.onSpeed);
    this.model.off("change:data", this.onScene);
    if (this.onAnswers) this.model.off("change:answers", this.onAnswers);
    window.removeEventListener("resize", this.onResize);
    document.removeEventListener("fullscreenchange", this.onResize);
    if (this.observer) this.observer.disconnect();
    if (this.themeObserver) this.themeObserver.disconnect();
  }
}

function render({ model, el }) {
  const player = new Player(model, el);
  return () => player.destroy();
}

export default { render };
