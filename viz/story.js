// viz/story.js: the front end of the whole story (viz.session players, source lines, the backward-pass layer),
// appended to player.js for those players only (viz/player.py front_end; viz/quiz.js is the model).
// A session player steps through calls, not nodes: its nodes are marked by what each call did to them
// (a tensor whose value or .grad changed, saved values freed by a backward without retain_graph, the node a
// failure or an in-place op is about). A source line in the panel lights up every node it made: click it,
// or focus it with Tab and press Enter or Space.

// [class, text, shown when] as in player.js's LEGEND
LEGEND.session = [
  ["mg-k-changed", "value or .grad changed in this step", (p) => p.storyHas("changed")],
  ["mg-k-ref", "the node this step is about", (p) => p.storyHas("refs")],
  ["mg-k-freed", "saved values freed (backward without retain_graph)", (p) => p.storyHas("freed")],
  ["mg-k-lchange", "panel: before -> after", (p) => p.storyHas("changed")],
  ["mg-k-lerror", "panel: the error", (p) => p.steps.some((s) => s.kind === "error")],
  ["mg-k-lversion", "panel: version counter", (p) => p.storyLines("version")],
];
const STORY_PICK = ["mg-k-pick", "made by the picked source line (click or Enter)", (p) => Object.keys(p.data.sources || {}).length > 0];
const STORY_LAYER = ["mg-k-layer", "second layer: made by a backward with create_graph", (p) => p.storyLines("layer")];
for (const key of ["session", "backward", "forward"]) LEGEND[key].push(STORY_PICK);
LEGEND.backward.push(STORY_LAYER);

const STORY = {
  storyHas(key) {
    return this.steps.some((s) => (s[key] || []).length > 0);
  },

  storyLines(kind) {
    return this.steps.some((s) => (s.lines || []).some((l) => l[0] === kind));
  },

  storyCls(id, k, cls) {
    // player.js's state of the node, with what the story adds to it
    const step = this.steps[k] || {};
    if (this.data.session) {
      // a session's graph was built before its first call: no "created in this step"
      cls = (step.refs || []).includes(id) ? " mg-ref" : "";
      if (this.storyFreedAt(id) <= k) cls += " mg-freed";
      if ((step.changed || []).includes(id)) cls += " mg-changed";
    }
    if (this.pick && (this.data.sources || {})[id] == this.pick) cls += / mg-ref/.test(cls) ? " mg-pick" : " mg-pick mg-ref";
    return cls;
  },

  storyFreedAt(id) {
    if (this.storyFreedFor !== this.steps) {
      this.storyFreedFor = this.steps;
      this.storyFreed = new Map();
      this.steps.forEach((s, i) => { for (const n of s.freed || []) if (!this.storyFreed.has(n)) this.storyFreed.set(n, i); });
    }
    const at = this.storyFreed.get(id);
    return at === undefined ? Infinity : at;
  },

  storyLine(d, kind, text) {
    if (kind !== "source") return;
    // a button to the keyboard and to screen readers: Tab to it, Enter or Space lights up its nodes
    d.tabIndex = 0;
    d.setAttribute("role", "button");
    d.setAttribute("aria-pressed", String(this.pick == text));
    d.title = "Light up every node this line made (click, or Enter)";
    const pick = () => {
      const focused = document.activeElement === d;
      this.pick = this.pick == text ? 0 : text;
      this.go(this.k); // makes the panel again: the focus goes back to the same line
      const again = focused && [...this.lines.children].find((e) => e.tabIndex === 0 && e.textContent === text);
      if (again) again.focus({ preventScroll: true });
    };
    d.onclick = (e) => { e.stopPropagation(); pick(); };
    d.onkeydown = (e) => {
      if (e.key !== "Enter" && e.key !== " ") return;
      e.preventDefault();
      e.stopPropagation(); // Space here is not play
      pick();
    };
  },
};
Object.assign(Player.prototype, STORY);
