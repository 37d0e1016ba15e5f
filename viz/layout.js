// viz/layout.js: the graph laid out in the browser, appended to player.js only where Python has no Graphviz
// (viz/player.py front_ends: a payload whose layout says so, and viz.draw's widget). The WebAssembly Graphviz
// viz ships (viz/vendor/) lays the DOT out; decorate() then marks the SVG as viz/player.py's decorate does,
// so that the player can switch its states on it.

// -- the WebAssembly Graphviz: loaded once per page, from the page or from the kernel --
function graphviz(ask) {
  if (!window.__mgGraphviz) {
    window.__mgGraphviz = (async () => {
      const inline = document.getElementById("mg-graphviz");
      const source = inline ? inline.textContent : await ask();
      const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
      try {
        const module = await import(url);
        return await module.instance();
      } finally {
        URL.revokeObjectURL(url);
      }
    })();
    window.__mgGraphviz.catch(() => { window.__mgGraphviz = null; });
  }
  return window.__mgGraphviz;
}

function withRankdir(dot, rankdir) {
  // edge labels: one line TB, stacked LR (as with_rankdir in player.py)
  const stacked = rankdir === "LR" || rankdir === "RL";
  return dot.replace(/rankdir="(TB|LR|BT|RL)"/, 'rankdir="' + rankdir + '"').split("\n").map((line) => {
    if (!/^\s*n\d+ -> n\d+/.test(line)) return line;
    return stacked ? line.split("  <B>").join("<BR/><B>").split(" · ").join("<BR/>")
      : line.split("<BR/><B>").join("  <B>").split("<BR/>").join(" · ");
  }).join("\n");
}

// -- decorating Graphviz's SVG (what viz/player.py's decorate does in Python) --
function placeholder(t, cls) {
  // a reserved line becomes an empty, centred text the player fills
  if ((t.getAttribute("text-anchor") || "start") === "start") {
    const x = Number(t.getAttribute("x")) || 0;
    t.setAttribute("x", String(x + t.getComputedTextLength() / 2));
  }
  t.setAttribute("text-anchor", "middle");
  t.removeAttribute("font-weight");
  t.textContent = "";
  t.classList.add(cls);
}

function decorate(svg, info) {
  const ns = svg.namespaceURI;
  const saved = (info.savedFill || "").toLowerCase();
  const badge = (info.badgeFill || "").toLowerCase();
  for (const g of svg.querySelectorAll("g.node")) {
    const title = g.querySelector("title");
    if (!title) continue;
    const id = title.textContent;
    g.setAttribute("data-n", id);
    const shapes = [...g.querySelectorAll("polygon, path")];
    let border = null;
    for (const el of shapes) {
      const stroke = el.getAttribute("stroke");
      if ((el.getAttribute("fill") || "").toLowerCase() === "none" && stroke && stroke !== "none") border = el;
    }
    if (border) border.classList.add("mg-border");
    if (shapes.length && shapes[0] !== border) shapes[0].classList.add("mg-bg");
    let mark = null;
    for (const el of g.querySelectorAll("polygon, text")) {
      if (el.tagName === "polygon") {
        const fill = (el.getAttribute("fill") || "").toLowerCase();
        mark = fill === saved ? "mg-saved" : fill === badge ? "mg-badge" : null;
        if (mark) el.classList.add(mark);
      } else if (mark) { el.classList.add(mark); mark = null; }
    }
    const note = (info.nodeTexts || {})[id];
    if (note) {
      const t = [...g.querySelectorAll("text")].reverse().find((x) => x.textContent === note);
      if (t) placeholder(t, "mg-note");
    }
    const box = border && bbox(border);
    if (!box) continue;
    for (const [cls, cx] of [["mg-stepbadge", box.x - 8], ["mg-arrbadge", box.x + box.width + 8]]) {
      const b = document.createElementNS(ns, "g");
      b.setAttribute("class", cls);
      const c = document.createElementNS(ns, "circle");
      c.setAttribute("cx", String(cx)); c.setAttribute("cy", String(box.y + 2)); c.setAttribute("r", "9");
      const t = document.createElementNS(ns, "text");
      t.setAttribute("x", String(cx)); t.setAttribute("y", String(box.y + 5.5));
      t.setAttribute("text-anchor", "middle"); t.setAttribute("font-size", "10");
      b.append(c, t);
      g.appendChild(b);
    }
  }
  const edges = info.edges || [];
  for (const g of svg.querySelectorAll("g.edge")) {
    const gid = g.getAttribute("id") || "";
    const k = /^edge\d+$/.test(gid) ? Number(gid.slice(4)) - 1 : -1;
    const title = g.querySelector("title");
    if (k < 0 || k >= edges.length || !title || title.textContent !== edges[k][0] + "->" + edges[k][1]) continue;
    g.setAttribute("data-e", String(k));
    g.setAttribute("data-src", edges[k][0]);
    g.setAttribute("data-dst", edges[k][1]);
    const reserved = (info.edgeTexts || {})[k];
    const texts = [...g.querySelectorAll("text")];
    const hold = reserved ? [...texts].reverse().find((t) => t.textContent === reserved) : null;
    for (const t of texts) {
      if (t === hold) placeholder(t, "mg-glabel");
      else t.classList.add("mg-elabel");
    }
    for (const el of g.children) {
      if (el.tagName === "path") el.classList.add("mg-path");
      else if (el.tagName === "polygon") el.classList.add("mg-head");
    }
    if (!hold) {
      const path = g.querySelector("path");
      const box = path && bbox(path);
      if (box) {
        const t = document.createElementNS(ns, "text");
        t.setAttribute("x", String(box.x + box.width / 2 + 4)); t.setAttribute("y", String(box.y + box.height / 2));
        t.setAttribute("font-size", "10");
        t.setAttribute("class", "mg-glabel");
        g.appendChild(t);
      }
    }
  }
  // module labels were laid out without room (reserve() in player.py): from the tooltip, left of the frame
  for (const g of svg.querySelectorAll("g.cluster")) {
    const a = [...g.querySelectorAll("a")].find((x) => /^module /.test(x.getAttribute("xlink:title")));
    const box = bbox(g.querySelector("path, polygon"));
    if (!a || !box || g.querySelector("text")) continue;
    const t = document.createElementNS(ns, "text");
    for (const [k, v] of [["x", box.x - 12], ["y", box.y + 11], ["text-anchor", "end"], ["font-size", 11]]) t.setAttribute(k, v);
    t.textContent = a.getAttribute("xlink:title").slice(7);
    a.appendChild(t);
  }
  const graph = svg.querySelector("g");
  if (graph) graph.setAttribute("class", "graph mg-graph");
  svg.setAttribute("class", "mg-svg");
  const vb = svg.viewBox && svg.viewBox.baseVal;
  if (vb && vb.width) svg.setAttribute("viewBox", [vb.x - PAD, vb.y - PAD, vb.width + 2 * PAD, vb.height + 2 * PAD].join(" "));
}

const LAYOUT = {
  async layOut(dir) {
    const engine = await graphviz(() => this.ask({ type: "graphviz" }, "msg:custom", null));
    const svg = engine.renderSVGElement(withRankdir(this.layout.dot, dir));
    this.stage.textContent = "";
    this.stage.appendChild(svg);
    await laidOut(this.root); // decorate() and the others measure texts
    decorate(svg, this.layout);
    fitTexts(svg);
    if (/LR|RL/.test(dir)) badgesOnTop(svg);
    placeClusterLabels(svg);
    return svg;
  },
};
Object.assign(Player.prototype, LAYOUT);
