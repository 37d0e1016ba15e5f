// viz/tangent.js: forward mode's words for the player (viz.animate(f, dual_x), viz/tangent.py), appended to
// player.js for those players only (viz/player.py front_end). The steps are the backward player's (one node per
// step, values along the edges, a note on each node); what travels is a tangent, forward, with the values.

// [class, text, shown when] as in player.js's LEGEND
LEGEND.tangent = [
  ["mg-k-current", "computes its value and tangent now", () => true],
  ["mg-k-waiting", "waiting: some input tangents arrived", (p) => p.has.waiting],
  ["mg-k-done", "done (step number)", () => true], ["mg-k-pending", "not reached yet", () => true],
  ["mg-k-sum", "input tangents arrived / expected", (p) => p.has.summing],
];

const TANGENT_LEGEND = Player.prototype.fillLegend;
Object.assign(Player.prototype, {
  fillLegend() {
    if (this.data.legend === "tangent") this.root.setAttribute("aria-label", "forward-mode (tangent) player");
    TANGENT_LEGEND.call(this);
  },
});

// A tangent is written on its node when its step runs: where the browser's bold font is wider than the metrics
// Graphviz laid the box out with, it is fitted into its box (as fitTexts fits the texts known at load).
const TANGENT_GO = Player.prototype.go;
Player.prototype.go = function (k) {
  TANGENT_GO.call(this, k);
  if (this.data.legend !== "tangent") return;
  for (const [, node] of this.nodes) {
    const t = node.noteEl;
    const border = t && t.textContent && node.g.querySelector(".mg-border");
    if (!border) continue;
    t.removeAttribute("textLength");
    const room = border.getBBox().width - 14; // inside the thick border of the node that runs now
    if (t.getComputedTextLength() > room) {
      t.setAttribute("textLength", String(room));
      t.setAttribute("lengthAdjust", "spacingAndGlyphs");
    }
  }
};
