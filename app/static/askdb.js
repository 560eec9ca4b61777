// askdb's little JavaScript: live steps while a turn runs, charts, and delete confirmation.
// Everything works without it; it only makes the page live. Text is always set with
// textContent, never innerHTML, so nothing from the model or the data becomes markup.
"use strict";

(function () {
  const COLORS = ["#2457c5", "#d9822b", "#2e9e6b", "#a23b72"];

  function drawChart(figure, kind) {
    const spec = JSON.parse(figure.dataset.chart);
    const canvas = figure.querySelector("canvas");
    if (figure._chart) { figure._chart.destroy(); figure._chart = null; }
    figure.querySelectorAll(".chart-switch button").forEach((b) =>
      b.setAttribute("aria-pressed", String(b.dataset.kind === kind)));
    canvas.hidden = kind === "none";
    if (kind === "none" || typeof Chart === "undefined") return;
    figure._chart = new Chart(canvas, {
      type: kind,
      data: {
        labels: spec.labels,
        datasets: spec.series.map((s, i) => ({
          label: s.name, data: s.data, borderColor: COLORS[i % COLORS.length],
          backgroundColor: COLORS[i % COLORS.length] + (kind === "bar" ? "cc" : "33"), tension: 0.2,
        })),
      },
      options: { animation: false, responsive: true, maintainAspectRatio: false,
                 plugins: { legend: { display: spec.series.length > 1 } } },
    });
    figure.dataset.kind = kind;
  }

  function setUpCharts() {
    document.querySelectorAll("figure.chart[data-chart]").forEach((figure) => {
      drawChart(figure, JSON.parse(figure.dataset.chart).kind);
      figure.querySelectorAll(".chart-switch button").forEach((button) =>
        button.addEventListener("click", () => drawChart(figure, button.dataset.kind)));
    });
  }

  function setUpConfirm() {
    document.querySelectorAll("a[data-confirm]").forEach((link) => {
      link.addEventListener("click", (event) => {
        event.preventDefault();
        if (!window.confirm(link.dataset.confirm)) return;
        const form = document.createElement("form");
        form.method = "post";
        form.action = link.getAttribute("href");
        document.body.appendChild(form);
        form.submit();
      });
    });
  }

  // -- live steps ------------------------------------------------------------------

  function stepItem(step) {
    const li = document.createElement("li");
    li.className = "step step-" + step.step_type;
    li.dataset.stepIndex = step.step_index;
    const kind = document.createElement("span");
    kind.className = "step-kind";
    kind.textContent = step.action || step.step_type;
    li.appendChild(kind);
    if (step.args && Object.keys(step.args).length) {
      const args = document.createElement("code");
      args.className = "step-args";
      args.textContent = JSON.stringify(step.args);
      li.append(" ", args);
    }
    const meta = document.createElement("span");
    meta.className = "muted";
    meta.textContent = " " + Math.round(step.duration_ms || 0) + " ms";
    li.appendChild(meta);
    if (step.thought) {
      const thought = document.createElement("p");
      thought.className = "thought";
      thought.textContent = "Thought: " + step.thought;
      li.appendChild(thought);
    }
    if (step.observation && step.step_type !== "answer") {
      const pre = document.createElement("pre");
      pre.className = "observation";
      pre.textContent = step.observation.length > 600 ? step.observation.slice(0, 600) + " …" : step.observation;
      li.appendChild(pre);
    }
    return li;
  }

  function showStep(step) {
    const list = document.getElementById("live-steps");
    if (list.querySelector('[data-step-index="' + step.step_index + '"]')) return;
    list.hidden = false;
    list.appendChild(stepItem(step));
  }

  function showError(message) {
    const box = document.getElementById("ask-error");
    box.textContent = message;
    box.hidden = false;
  }

  // Handle one parsed Server-Sent Event; returns the thread id once known.
  function onEvent(name, data, state) {
    if (data.thread_id) state.threadId = data.thread_id;
    if (name === "step" && data.step) showStep(data.step);
    if (name === "error" && data.message) showError(data.message);
    if (name === "answer" || name === "done") state.finished = true;
  }

  async function streamChat(form) {
    const button = form.querySelector("button[type=submit]");
    const body = { question: form.question.value, thread_id: form.thread_id.value || null };
    button.disabled = true;
    document.getElementById("ask-error").hidden = true;
    const state = { threadId: body.thread_id, finished: false };
    try {
      const response = await fetch("/api/chat", {
        method: "POST", body: JSON.stringify(body),
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      });
      if (!response.ok) {
        const problem = await response.json().catch(() => ({ detail: response.statusText }));
        showError(problem.detail || "The question could not be asked (" + response.status + ").");
        button.disabled = false;
        return;
      }
      form.classList.add("running");
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let name = "message", data = "";
          block.split("\n").forEach((line) => {
            if (line.startsWith("event: ")) name = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          });
          if (data) onEvent(name, JSON.parse(data), state);
        }
      }
    } catch (error) {
      showError("The connection was lost (" + error.message + "). The answer is still saved: reload the page.");
    }
    if (state.threadId) showConversation(state.threadId);
  }

  // Show the finished turn, server-rendered. Assigning the same path with only a new hash
  // would not reload the page, so a follow-up in the same conversation reloads.
  function showConversation(threadId) {
    const path = "/c/" + threadId;
    if (window.location.pathname === path) {
      window.location.hash = "turn-last";
      window.location.reload();
    } else {
      window.location.assign(path + "#turn-last");
    }
  }

  function follow(url) {
    const source = new EventSource(url);
    const state = { threadId: null, finished: false };
    ["step", "answer", "error", "start"].forEach((name) =>
      source.addEventListener(name, (e) => onEvent(name, JSON.parse(e.data), state)));
    source.addEventListener("done", () => { source.close(); window.location.reload(); });
  }

  document.addEventListener("DOMContentLoaded", () => {
    setUpCharts();
    setUpConfirm();
    const form = document.getElementById("ask-form");
    if (!form) return;
    form.addEventListener("submit", (event) => { event.preventDefault(); streamChat(form); });
    if (form.dataset.follow) follow(form.dataset.follow);
    if (window.location.hash === "#turn-last") {
      const last = document.querySelector(".turn[data-last]");
      if (last) last.scrollIntoView();
    }
  });
})();
