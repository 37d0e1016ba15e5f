// viz/quiz.js: the quiz of viz.animate(loss, quiz=True), appended to player.js for quiz players only (the
// questions come from viz/quiz.py in data.quiz).
// Before a step with a question is revealed the player stops on the step before it and asks; the answer
// (a clicked or picked node, typed values or a shape) is checked here as viz.quiz checks it, the verdict
// and the reason are shown and the step is revealed. Answers go in the synced "answers" list (Python reads
// and checks them again: player.answers); an exported page keeps them in localStorage.
const QUIZ_NUMBER = /[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/g;
const QUIZ_RTOL = 1e-2;
const QUIZ_ATOL = 1e-3;

function quizFlat(v) {
  return Array.isArray(v) ? v.flatMap(quizFlat) : [Number(v)];
}

function quizRight(q, given) {
  // what viz.quiz.is_right says: the node (drawn id or name), the values within rounding, or the shape
  if (given == null || given === "") return false;
  if (q.kind === "next") {
    const text = String(given).trim();
    return text === q.expected || (q.names || []).includes(text);
  }
  const found = String(given).match(QUIZ_NUMBER);
  if (!found) return false;
  const nums = found.map(Number);
  const exp = q.expected;
  if (exp && !Array.isArray(exp) && typeof exp === "object") {
    const shape = exp.shape || [];
    return nums.length === shape.length && nums.every((x, i) => Number.isInteger(x) && x === shape[i]);
  }
  const want = quizFlat(exp);
  return nums.length === want.length && nums.every((x, i) => Math.abs(x - want[i]) <= QUIZ_ATOL + QUIZ_RTOL * Math.abs(want[i]));
}

function quizHash(text) {
  let hash = 5381;
  for (let i = 0; i < text.length; i++) hash = ((hash * 33) ^ text.charCodeAt(i)) >>> 0;
  return hash.toString(36);
}

const QUIZ = {
  quizLoad() {
    // (again) after a new payload: a module opened keeps the quiz, and the answers given so far
    if (!this.quizBox) {
      this.quizBox = h("div", "mg-quiz");
      this.quizBox.setAttribute("aria-live", "polite");
      this.side.insertBefore(this.quizBox, this.title);
    }
    const qs = (!this.forward && !this.graphOnly && this.data.quiz) || [];
    if (qs !== this.quizData) this.asking = null; // the same questions (another layout direction): still asked
    this.quizData = qs;
    this.quiz = qs.length ? qs : null;
    this.root.classList.toggle("mg-quizzing", !!this.quiz);
    this.quizBox.style.display = this.quiz ? "" : "none";
    if (!this.quiz) return;
    this.quizKey = "mg-quiz:" + location.pathname + ":" + quizHash(JSON.stringify(this.quiz.map((q) => [q.id, q.prompt])));
    let list = this.model.get("answers") || [];
    if (this.model.get("standalone")) {
      try {
        const kept = JSON.parse(window.localStorage.getItem(this.quizKey) || "null");
        if (Array.isArray(kept) && kept.length > list.length) list = kept;
      } catch (err) {
        // no storage (a sandboxed frame): the answers live as long as the page
      }
    }
    this.answers = list.slice();
    this.quizNames = new Map();
    for (const s of this.steps) {
      if (!["run", "accumulate", "module"].includes(s.kind)) continue; // "X runs", "X adds into", "X runs its"
      const m = /^(.*?) (runs|adds into)\b/.exec(s.title || "");
      for (const id of s.ids || []) if (!this.quizNames.has(id)) this.quizNames.set(id, m ? m[1] : s.title || id);
    }
    if (!this.onAnswers) {
      this.onAnswers = () => {
        const now = this.model.get("answers") || [];
        if (now.length > this.answers.length) { this.answers = now.slice(); this.quizShow(this.k); }
      };
      this.model.on("change:answers", this.onAnswers);
    }
  },

  quizFirst(id) {
    return this.answers.find((a) => a.question === id);
  },

  quizScore() {
    // as viz.quiz scores: each question's first answer
    const first = new Map();
    for (const a of this.answers) if (!first.has(a.question)) first.set(a.question, a);
    let right = 0;
    for (const a of first.values()) if (a.correct) right++;
    return [right, first.size];
  },

  quizGate(k) {
    // moving forward past an unanswered question stops on the step before it, and asks
    if (!this.quiz || !this.steps.length) return false;
    k = Math.max(0, Math.min(this.steps.length - 1, Math.round(Number(k) || 0)));
    const open = this.quiz.filter((q) => q.step > this.k && q.step <= k && !this.quizFirst(q.id));
    open.sort((a, b) => a.step - b.step || a.id - b.id);
    const q = open[0];
    if (!q) { this.asking = null; return false; }
    this.asking = q;
    if (this.k !== q.step - 1) { this.go(q.step - 1); this.save("frame", this.k); } else this.quizShow(this.k);
    // after the button's own focus(): the learner types at once
    setTimeout(() => { const f = this.quizBox.querySelector(".mg-q-input, .mg-q-pick"); if (f && this.asking === q) f.focus({ preventScroll: true }); }, 0);
    return true;
  },

  quizAnswer(given) {
    const q = this.asking;
    if (!q) return;
    const entry = { question: q.id, given: given == null ? null : given, correct: quizRight(q, given) };
    this.answers = this.answers.concat([entry]);
    this.asking = null;
    this.save("answers", this.answers);
    if (this.model.get("standalone")) {
      try { window.localStorage.setItem(this.quizKey, JSON.stringify(this.answers)); } catch (err) { /* no storage */ }
    }
    this.go(q.step); // the step revealed, its verdict above it
    this.save("frame", this.k);
  },

  quizClick(e) {
    const q = this.asking;
    if (!q || q.kind !== "next") return false;
    const g = e.target && e.target.closest && e.target.closest("g.node[data-n]");
    if (!g) return false;
    e.stopPropagation();
    this.quizAnswer(g.getAttribute("data-n"));
    return true;
  },

  quizShown(q, given) {
    if (given == null) return "(skipped)";
    if (q.kind === "next" && this.quizNames.has(given)) return this.quizNames.get(given);
    return String(given);
  },

  quizShow(k) {
    const box = this.quizBox;
    if (!box || !this.quiz) return;
    if (this.asking && this.asking.step - 1 !== k) this.asking = null;
    const q = this.asking;
    this.root.classList.toggle("mg-asking", !!q);
    this.root.classList.toggle("mg-asking-node", !!q && q.kind === "next");
    for (const node of this.nodes.values()) node.g.classList.remove("mg-asked");
    if (q && q.kind !== "next") {
      const node = this.nodes.get(((this.steps[q.step] || {}).ids || [])[0]);
      if (node) node.g.classList.add("mg-asked"); // the node the question is about
    }
    box.textContent = "";
    const [right, answered] = this.quizScore();
    const score = h("div", "mg-q-score", "Quiz score: " + right + " / " + answered);
    score.appendChild(h("span", "mg-q-of", " · " + this.quiz.length + " questions"));
    box.appendChild(score);
    if (q) {
      box.appendChild(h("div", "mg-q-label", "Question " + (this.quiz.indexOf(q) + 1) + " of " + this.quiz.length +
        ", before step " + q.step));
      box.appendChild(h("div", "mg-q-prompt", q.prompt));
      const form = h("form", "mg-q-form");
      let field;
      if (q.kind === "next") {
        field = h("select", "mg-q-pick");
        field.appendChild(h("option", null, "pick a node…")).value = "";
        const names = new Set();
        for (let i = q.step; i < this.steps.length; i++) {
          const s = this.steps[i];
          if (s.kind !== "run" && s.kind !== "accumulate") continue;
          for (const id of s.ids || []) names.add(this.quizNames.get(id) || id);
        }
        for (const name of [...names].sort()) field.appendChild(h("option", null, name)).value = name;
        field.setAttribute("aria-label", "the node that runs next");
      } else {
        field = h("input", "mg-q-input");
        field.type = "text";
        field.autocomplete = "off";
        field.spellcheck = false;
        const shape = q.expected && !Array.isArray(q.expected) && typeof q.expected === "object";
        field.placeholder = shape ? "a shape, e.g. (3, 4)" : "values, e.g. [1, -2.5]";
        field.setAttribute("aria-label", shape ? "your answer: a shape" : "your answer: values");
      }
      const check = h("button", "mg-btn mg-q-check", "Check");
      check.type = "submit";
      const skip = h("button", "mg-btn mg-q-skip", "Show me");
      skip.type = "button";
      skip.title = "Reveal the answer (counts as not right)";
      skip.addEventListener("click", (e) => { e.stopPropagation(); this.quizAnswer(null); });
      const note = h("div", "mg-q-note", "");
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        e.stopPropagation();
        const value = String(field.value || "").trim();
        if (!value) { note.textContent = q.kind === "next" ? "Click a node, or pick one first." : "Type an answer first."; return; }
        this.quizAnswer(value);
      });
      form.addEventListener("keydown", (e) => e.stopPropagation()); // typing is not stepping
      form.append(field, check, skip);
      box.append(form, note);
      if (q.kind === "next") box.appendChild(h("div", "mg-q-note", "Or click the node in the picture."));
      return;
    }
    for (const asked of this.quiz) {
      if (asked.step !== k) continue;
      const a = this.quizFirst(asked.id);
      if (!a) continue;
      const v = h("div", "mg-q-verdict " + (a.correct ? "mg-q-right" : "mg-q-wrong"));
      v.appendChild(h("div", "mg-q-head", a.correct ? "✓ Right" : a.given == null ? "✗ Not answered" : "✗ Not quite"));
      v.appendChild(h("div", "mg-q-prompt", asked.prompt));
      v.appendChild(h("div", "mg-q-line", "Your answer: " + this.quizShown(asked, a.given)));
      if (!a.correct) v.appendChild(h("div", "mg-q-line", "The answer: " + asked.expected_text));
      v.appendChild(h("div", "mg-q-reason", asked.reason));
      box.appendChild(v);
    }
  },
};
Object.assign(Player.prototype, QUIZ);
