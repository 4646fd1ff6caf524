// Ridgepoint quizzes: check answers, give per-option feedback, allow retries, keep progress in localStorage.
//
// The page already holds everything: which options are right (data-correct), every explanation (inside each
// question's <details>), and for numeric questions the answer and the allowed error computed at build time by
// the calculators (data-answer, data-allowed-error). This script only compares and shows; it computes nothing.
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
        const guess = Number(response.replace(/,/g, ""));
        const answer = Number(this.element.dataset.answer);
        const allowed = Number(this.element.dataset.allowedError);
        if (!Number.isFinite(guess)) return { right: false, invalid: true };
        // The tiny slack only absorbs floating-point rounding of numbers computed at build time.
        return { right: Math.abs(guess - answer) <= allowed * (1 + 1e-9), high: guess > answer, guess };
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
          nodes.push(paragraph(`"${response}" is not a number. Type digits, for example 295.`, "rp-quiz__verdict-title"));
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

  if (typeof window.document$ !== "undefined") window.document$.subscribe(init);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
