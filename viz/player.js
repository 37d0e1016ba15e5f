// viz/player.js: the front end of viz.animate (backward) and viz.record (forward).
// Graphviz laid the graph out once, in Python; a frame only switches classes and texts on
// that one SVG. The payload is the run order with one small record per step; the state at
// step k (done, waiting, labels so far) is derived here, never shipped per frame.

const SPEEDS = [0.25, 0.5, 1, 2, 4, 8];
const STEPS_PER_SECOND = 1.25; // at speed 1
const PX_PER_PT = 4 / 3;
const ICONS = {
  first: "M3 2h2v12H3zM14 2v12L6 8z",
  prev: "M12 2v12L4 8z",
  play: "M4 2l10 6-10 6z",
  pause: "M4 2h3v12H4zM9 2h3v12H9z",
  next: "M4 2v12l8-6z",
  last: "M11 2h2v12h-2zM2 2v12l8-6z",
};
const LEGEND = {
  backward: [
    ["mg-k-current", "runs now"], ["mg-k-waiting", "waiting: some gradients arrived"],
    ["mg-k-done", "done (step number)"], ["mg-k-pending", "not reached yet"],
    ["mg-k-sum", "gradients arrived / expected"], ["mg-k-freed", "saved values freed"],
    ["mg-k-hook", "hook fired"],
  ],
  forward: [["mg-k-new", "created in this step"], ["mg-k-born", "created earlier"]],
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

class Player {
  constructor(model, host) {
    this.model = model;
    this.data = model.get("data") || { steps: [] };
    this.steps = this.data.steps || [];
    this.forward = this.data.mode === "forward";
    this.k = -1;
    this.timer = null;
    this.playing = false;
    this.speed = Number(model.get("speed")) || 1;
    this.build(host);
    this.index();
    this.derive();
    this.go(Number(model.get("frame")) || 0);
    this.onFrame = () => { const f = Number(this.model.get("frame")); if (f !== this.k) this.go(f); };
    this.onSpeed = () => { this.speed = Number(this.model.get("speed")) || 1; this.speedBox.value = String(this.speed); };
    model.on("change:frame", this.onFrame);
    model.on("change:speed", this.onSpeed);
    requestAnimationFrame(() => this.fit(true));
  }

  // -- DOM ---------------------------------------------------------------------------------------
  build(host) {
    const root = (this.root = h("div", "mg-player"));
    root.tabIndex = 0;
    root.setAttribute("data-lm-suppress-shortcuts", "true");
    root.setAttribute("role", "group");
    root.setAttribute("aria-label", this.forward ? "forward graph player" : "backward pass player");
    root.mgPlayer = this;
    const bar = h("div", "mg-bar");
    const button = (name, title, fn) => {
      const b = h("button", "mg-btn mg-" + name);
      b.type = "button";
      b.title = title;
      b.setAttribute("aria-label", title);
      b.appendChild(icon(name));
      b.addEventListener("click", (e) => { e.stopPropagation(); fn(); root.focus({ preventScroll: true }); });
      bar.appendChild(b);
      return b;
    };
    button("first", "First step (Home)", () => this.user(0));
    button("prev", "Step back (←)", () => this.user(this.k - 1));
    this.playBtn = button("play", "Play (space)", () => this.toggle());
    button("next", "Step forward (→)", () => this.user(this.k + 1));
    button("last", "Last step (End)", () => this.user(this.steps.length - 1));
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
    for (const s of SPEEDS) {
      const o = h("option", null, s + "×");
      o.value = String(s);
      speed.appendChild(o);
    }
    if (!SPEEDS.includes(this.speed)) {
      const o = h("option", null, this.speed + "×");
      o.value = String(this.speed);
      speed.appendChild(o);
    }
    speed.value = String(this.speed);
    speed.addEventListener("change", () => {
      this.speed = Number(speed.value) || 1;
      this.save("speed", this.speed);
    });
    bar.appendChild(speed);
    const zoom = h("span", "mg-zoom");
    for (const [label, title, fn] of [["−", "Zoom out", () => this.scale(this.zoom / 1.25)],
                                      ["fit", "Fit the width", () => this.fit(false)],
                                      ["+", "Zoom in", () => this.scale(this.zoom * 1.25)]]) {
      const b = h("button", "mg-btn mg-z", label);
      b.type = "button";
      b.title = title;
      b.addEventListener("click", (e) => { e.stopPropagation(); fn(); });
      zoom.appendChild(b);
    }
    bar.appendChild(zoom);
    root.appendChild(bar);

    const main = h("div", "mg-main");
    this.stage = h("div", "mg-stage");
    this.stage.innerHTML = this.model.get("svg") || "";
    const side = h("div", "mg-side");
    this.title = h("div", "mg-title");
    this.lines = h("div", "mg-lines");
    this.lines.setAttribute("aria-live", "polite");
    side.append(this.title, this.lines);
    main.append(this.stage, side);
    root.appendChild(main);

    const legend = h("div", "mg-legend");
    for (const [cls, text] of LEGEND[this.forward ? "forward" : "backward"]) {
      const item = h("span", "mg-key");
      item.append(h("span", "mg-chip " + cls), document.createTextNode(text));
      legend.appendChild(item);
    }
    root.appendChild(legend);

    root.addEventListener("keydown", (e) => this.key(e));
    host.appendChild(root);
  }

  index() {
    this.svg = this.stage.querySelector("svg");
    this.nodes = new Map();
    this.edges = new Map();
    if (!this.svg) return;
    this.svg.removeAttribute("width");
    this.svg.removeAttribute("height");
    const box = this.svg.viewBox && this.svg.viewBox.baseVal;
    this.natural = box && box.width ? [box.width * PX_PER_PT, box.height * PX_PER_PT] : [600, 400];
    for (const g of this.svg.querySelectorAll("g.node")) {
      const title = g.querySelector("title");
      const id = g.getAttribute("data-n") || (title && title.textContent);
      if (!id) continue;
      this.nodes.set(id, {
        g, cls: null, arr: null, note: null,
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

  // -- the state, derived once from the run order -------------------------------------------------------
  derive() {
    const steps = this.steps;
    if (this.forward) {
      this.appear = new Map();
      steps.forEach((s, i) => { for (const id of s.appear || []) if (!this.appear.has(id)) this.appear.set(id, i); });
      return;
    }
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
    });
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
    return [cls, arr];
  }

  // -- one frame -------------------------------------------------------------------------------------------
  go(k) {
    const n = this.steps.length;
    if (!n) return;
    k = Math.max(0, Math.min(n - 1, Math.round(Number(k) || 0)));
    this.k = k;
    for (const [id, node] of this.nodes) {
      const [cls, arr] = this.nodeState(id, k);
      if (cls !== node.cls) { node.g.setAttribute("class", "node " + cls); node.cls = cls; }
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
    this.counter.textContent = "Step " + k + " / " + (n - 1);
    this.root.setAttribute("data-frame", String(k));
    this.follow(k);
  }

  panel(k) {
    const step = this.steps[k];
    this.title.textContent = step.title || "";
    const lines = this.lines;
    lines.textContent = "";
    for (const [kind, text] of step.lines || []) lines.appendChild(h("div", "mg-line mg-l-" + kind, text));
  }

  follow(k) {
    // keep the node of this step in view inside the stage (never scroll the page)
    const id = (this.steps[k].ids || [])[0];
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

  // -- controls ----------------------------------------------------------------------------------------------
  user(k) {
    this.pause();
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
                   " ": () => this.toggle() };
    const fn = keys[e.key];
    const tag = e.target && e.target.tagName;
    if (!fn || tag === "SELECT" || tag === "INPUT" || (tag === "BUTTON" && e.key === " ")) return;
    e.preventDefault();
    e.stopPropagation();
    fn();
  }

  scale(z) {
    if (!this.svg) return;
    this.zoom = Math.max(0.1, Math.min(4, z));
    this.svg.setAttribute("width", String(Math.round(this.natural[0] * this.zoom)));
    this.svg.setAttribute("height", String(Math.round(this.natural[1] * this.zoom)));
  }

  fit(initial) {
    const width = this.stage.clientWidth - 36;
    if (width <= 0) { this.scale(1); return; }
    const z = width / this.natural[0];
    this.scale(initial ? Math.min(1, Math.max(z, 0.6)) : z);
    this.follow(this.k);
  }

  destroy() {
    this.pause();
    this.model.off("change:frame", this.onFrame);
    this.model.off("change:speed", this.onSpeed);
  }
}

function render({ model, el }) {
  const player = new Player(model, el);
  return () => player.destroy();
}

export default { render };
