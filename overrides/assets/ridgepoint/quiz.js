// Ridgepoint quizzes: check answers, give per-option feedback, allow retries, keep progress in localStorage.
//
// The page already holds everything: which options are right (data-correct), every explanation (inside each
// question's <details>), and for numeric questions the answer and the allowed error computed at build time by
// the calculators (data-answer, and data-low/data-high: the accepted range exactly as the answer text states it). This script only compares and shows; it computes nothing.
// It re-initialises on Material's document$ (instant navigation) and leaves the no-JavaScript markup readable.
(() => {
  "use strict";

  const STORAGE_PREFIX = "ridgepoint:quiz:";

  const storageKey = () => STORAGE_PREFIX + window.location.pathname;

  function loadProgress() {
    try {
      const saved = JSON.parse(window.localStorage.getItem(storageKey()) || "{}");
      return saved && typeof saved === "object" ? saved : {};
    } catch {
      return {}; // storage blocked or corrupt: start afresh rather than break the quiz
    }
  }

  function saveProgress(progress) {
    try {
      if (Object.keys(progress).length === 0) window.localStorage.removeItem(storageKey());
      else window.localStorage.setItem(storageKey(), JSON.stringify(progress));
    } catch {
      // Private mode or a full quota: the quiz still works, it just forgets on reload.
    }
  }

  // Read what a reader typed as a number: "6.8", "6,8", "6.8 steps", "1,234.5", "1.234,5", "−3", "2e3".
  // Returns { value } or { error } with words a reader can act on. A lone comma before exactly three digits
  // ("6,800") could be a thousands separator or a decimal mark, so it is refused rather than guessed.
  function parseAnswer(text, unit) {
    let rest = text.trim().replace(/[\u00a0\u202f\u2009]/g, " ");
    const lower = rest.toLowerCase();
    const units = unit ? [unit, unit.replace(/s$/, ""), unit === "×" ? "x" : ""].filter(Boolean) : [];
    for (const name of units) {
      if (lower.endsWith(name.toLowerCase())) {
        rest = rest.slice(0, rest.length - name.length).trim();
        break;
      }
    }
    rest = rest.replace(/^[\u2212\u2013]/, "-").replace(/(\d) (?=\d{3}\b)/g, "$1");
    const unitWords = unit ? ` in ${unit}` : "";
    if (!/^[-+]?(\d[\d.,]*|[.,]\d+)(e[-+]?\d+)?$/i.test(rest)) {
      return { error: `"${text.trim()}" is not a number${unitWords}. Type a number such as 12.5 or 12,5${unit ? ` (the unit "${unit}" is optional)` : ""}.` };
    }
    const [mantissa, exponent = ""] = rest.split(/(?=e)/i);
    const dots = (mantissa.match(/\./g) || []).length;
    const commas = (mantissa.match(/,/g) || []).length;
    let decimal = ".";
    let group = ",";
    if (dots && commas) {
      decimal = mantissa.lastIndexOf(",") > mantissa.lastIndexOf(".") ? "," : ".";
      group = decimal === "," ? "." : ",";
    } else if (commas === 1 && dots === 0) {
      if (/^[-+]?\d{1,3},\d{3}$/.test(mantissa)) {
        const [whole, part] = mantissa.split(",");
        return { error: `"${text.trim()}" could mean ${whole}${part} or ${whole}.${part}. Type it without the comma, for example ${whole}${part} or ${whole}.${part}.` };
      }
      decimal = ",";
      group = ".";
    } else if (dots > 1) {
      decimal = ",";
      group = ".";
    }
    const [whole, fraction, extra] = mantissa.split(decimal);
    const groups = whole.replace(/^[-+]/, "").split(group);
    const grouped = groups.length === 1 || (groups[0].length >= 1 && groups[0].length <= 3 && groups.slice(1).every((g) => g.length === 3));
    if (extra !== undefined || !grouped || (fraction !== undefined && fraction.includes(group))) {
      return { error: `"${text.trim()}" mixes its separators. Type the number with one decimal mark, for example 1234.5.` };
    }
    const value = Number(whole.split(group).join("") + (fraction !== undefined ? "." + fraction : "") + exponent);
    if (!Number.isFinite(value)) return { error: `"${text.trim()}" is not a number${unitWords}. Type a number such as 12.5.` };
    return { value };
  }

  function paragraph(text, className) {
    const p = document.createElement("p");
    p.className = className;
    p.textContent = text;
    return p;
  }

  class Question {
    constructor(element, quiz) {
      this.element = element;
      this.quiz = quiz;
      this.id = element.dataset.question;
      this.kind = element.dataset.kind;
      this.feedback = element.querySelector(".rp-quiz__feedback");
      this.answer = element.querySelector(".rp-quiz__answer");
      this.inputs = Array.from(element.querySelectorAll("fieldset input"));
      element.querySelector("[data-action=check]").addEventListener("click", () => this.check(true));
      element.querySelector("[data-action=reveal]").addEventListener("click", () => this.reveal(true));
      for (const input of this.inputs) {
        input.addEventListener("input", () => this.clearMarks());
        input.addEventListener("change", () => this.clearMarks());
        if (this.kind === "numeric") {
          input.addEventListener("keydown", (event) => {
            if (event.key === "Enter") {
              event.preventDefault();
              this.check(true);
            }
          });
        }
      }
      element.querySelector(".rp-quiz__actions").hidden = false;
    }

    // The reader's current answer, as stored: option indices, or the typed text of a number.
    response() {
      if (this.kind === "numeric") return this.inputs[0].value.trim();
      return this.inputs.filter((input) => input.checked).map((input) => Number(input.value));
    }

    setResponse(response) {
      if (this.kind === "numeric") this.inputs[0].value = typeof response === "string" ? response : "";
      else for (const input of this.inputs) input.checked = Array.isArray(response) && response.includes(Number(input.value));
    }

    isEmpty(response) {
      return this.kind === "numeric" ? response === "" : response.length === 0;
    }

    explanation(index) {
      return this.answer.querySelector(`.rp-quiz__explanations li[data-option="${index}"]`);
    }

    correctOptions() {
      return Array.from(this.answer.querySelectorAll(".rp-quiz__explanations li[data-correct=true]"), (li) =>
        Number(li.dataset.option),
      );
    }

    clearMarks() {
      for (const li of this.element.querySelectorAll(".rp-quiz__option")) {
        li.classList.remove("rp-quiz__option--right", "rp-quiz__option--wrong", "rp-quiz__option--answer");
        li.querySelector("[data-mark]").textContent = "";
      }
      this.element.classList.remove("rp-quiz__question--right", "rp-quiz__question--wrong");
    }

    mark(index, state, words) {
      const li = this.element.querySelector(`.rp-quiz__option[data-option="${index}"]`);
      li.classList.add(`rp-quiz__option--${state}`);
      li.querySelector("[data-mark]").textContent = words;
    }

    // Fill the live region in one go, so that a screen reader announces the verdict and explanations once.
    show(nodes, verdictClass) {
      const box = document.createElement("div");
      box.className = `rp-quiz__verdict ${verdictClass}`;
      box.append(...nodes);
      this.feedback.replaceChildren(box);
    }

    evaluate(response) {
      if (this.kind === "numeric") {
        const parsed = parseAnswer(response, this.element.dataset.unit || "");
        if (parsed.error) return { right: false, invalid: parsed.error };
        const guess = parsed.value;
        // The range shown in the answer text, both ends included ("6.09 to 7.45 steps" takes 6.09 and 7.45).
        const low = Number(this.element.dataset.low);
        const high = Number(this.element.dataset.high);
        const answer = Number(this.element.dataset.answer);
        return { right: guess >= low && guess <= high, high: guess > answer, guess };
      }
      const correct = this.correctOptions();
      const right = response.length === correct.length && response.every((index) => correct.includes(index));
      return { right, correct, found: response.filter((index) => correct.includes(index)).length };
    }

    check(byReader) {
      const response = this.response();
      if (this.isEmpty(response)) {
        const ask = this.kind === "numeric" ? "Type a number first." : "Choose an option first.";
        this.show([paragraph(ask, "rp-quiz__verdict-title")], "rp-quiz__verdict--empty");
        return;
      }
      const result = this.evaluate(response);
      this.clearMarks();
      this.element.classList.add(result.right ? "rp-quiz__question--right" : "rp-quiz__question--wrong");
      const nodes = [];
      if (this.kind === "numeric") {
        if (result.invalid) {
          nodes.push(paragraph(result.invalid, "rp-quiz__verdict-title"));
        } else if (result.right) {
          nodes.push(paragraph("Right.", "rp-quiz__verdict-title"));
          for (const part of this.answer.querySelectorAll(".rp-quiz__solution, .rp-quiz__explanation")) {
            nodes.push(part.cloneNode(true));
          }
        } else {
          const way = result.high ? "too high" : "too low";
          nodes.push(paragraph(`Not quite: ${response} is ${way}. Try again, or show the answer.`, "rp-quiz__verdict-title"));
        }
      } else {
        const total = result.correct.length;
        let title;
        if (result.right) title = total > 1 ? `Right: all ${total} right options.` : "Right.";
        else if (this.kind === "multiple") title = `Not quite: ${result.found} of your choices are right, and ${total} options are right in all. Try again.`;
        else title = "Not quite. Try again.";
        nodes.push(paragraph(title, "rp-quiz__verdict-title"));
        const list = document.createElement("ul");
        list.className = "rp-quiz__explanations";
        for (const index of response) {
          const isRight = result.correct.includes(index);
          this.mark(index, isRight ? "right" : "wrong", isRight ? " (right)" : " (wrong)");
          list.append(this.explanation(index).cloneNode(true));
        }
        nodes.push(list);
      }
      this.show(nodes, result.right ? "rp-quiz__verdict--right" : "rp-quiz__verdict--wrong");
      if (byReader) this.quiz.record(this.id, { response, status: result.right ? "right" : "wrong" });
    }

    reveal(byReader) {
      this.clearMarks();
      if (this.kind !== "numeric") {
        for (const index of this.correctOptions()) this.mark(index, "answer", " (right answer)");
      }
      const nodes = [paragraph("The answer:", "rp-quiz__verdict-title")];
      for (const part of this.answer.children) {
        if (part.tagName !== "SUMMARY") nodes.push(part.cloneNode(true));
      }
      this.show(nodes, "rp-quiz__verdict--revealed");
      if (byReader) this.quiz.record(this.id, { response: this.response(), status: "revealed" });
    }

    restore(saved) {
      this.setResponse(saved.response);
      if (saved.status === "revealed") this.reveal(false);
      else if (!this.isEmpty(this.response())) this.check(false);
    }

    reset() {
      this.setResponse(null);
      this.clearMarks();
      this.feedback.replaceChildren();
    }
  }

  class Quiz {
    constructor(element) {
      this.element = element;
      this.questions = Array.from(element.querySelectorAll(".rp-quiz__question"), (el) => new Question(el, this));
      this.progressText = element.querySelector(".rp-quiz__progress");
      element.querySelector("[data-action=reset]").addEventListener("click", () => this.reset());
      element.querySelector(".rp-quiz__footer").hidden = false;
      element.classList.add("rp-quiz--enhanced");
    }

    restore() {
      const progress = loadProgress();
      // Feedback restored on arrival is not news: keep screen readers quiet while it is filled in.
      const regions = this.questions.map((q) => q.feedback);
      for (const region of regions) region.setAttribute("aria-live", "off");
      for (const question of this.questions) {
        if (progress[question.id]) question.restore(progress[question.id]);
      }
      window.setTimeout(() => {
        for (const region of regions) region.setAttribute("aria-live", "polite");
      }, 0);
      this.updateProgress(progress);
    }

    record(id, entry) {
      const progress = loadProgress();
      progress[id] = entry;
      saveProgress(progress);
      this.updateProgress(progress);
    }

    updateProgress(progress) {
      const right = this.questions.filter((q) => progress[q.id]?.status === "right").length;
      this.progressText.textContent = `${right} of ${this.questions.length} answered right.`;
    }

    reset() {
      const progress = loadProgress();
      for (const question of this.questions) {
        delete progress[question.id];
        question.reset();
      }
      saveProgress(progress);
      this.updateProgress(progress);
      this.progressText.textContent += " Answers cleared.";
    }
  }

  function init() {
    for (const element of document.querySelectorAll("[data-rp-quiz]")) {
      if (element.dataset.rpQuizReady) continue;
      element.dataset.rpQuizReady = "true";
      new Quiz(element).restore();
    }
  }

  window.ridgepoint.onEachPage(init); // ridgepoint.js, which runs first: every page view, instant navigation too
})();
