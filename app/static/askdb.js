// askdb's little JavaScript: a running turn followed in its card, Stop, charts, sortable and
// filterable result tables, the schema panel, copy SQL, confirmations. Everything works without
// it; it only makes the page live. Text is always set with textContent, never innerHTML, so
// nothing from the model or the data becomes markup.
"use strict";

(function () {
  const COLORS = ["#2457c5", "#d9822b", "#2e9e6b", "#a23b72"];
  let T = { step: "step", steps: "steps" };

  // -- charts ------------------------------------------------------------------------

  // The canvas itself is transparent: paint it white under the chart, so a PNG (or the browser's
  // "Save image as") is not a black or checkered square in other programs (issue 38).
  const WHITE_BACKGROUND = {
    id: "askdbWhiteBackground",
    beforeDraw(chart) {
      const g = chart.ctx;
      g.save();
      g.globalCompositeOperation = "destination-over";
      g.fillStyle = "#fff";
      g.fillRect(0, 0, chart.width, chart.height);
      g.restore();
    },
  };

  // The points to draw: all of them, or only those of the rows the table's filter leaves shown.
  function chartPoints(figure, spec) {
    const all = spec.labels.map((_, k) => k);
    if (!figure._shownRows) return all;
    return all.filter((k) => figure._shownRows.has(spec.rows[k]));
  }

  function drawChart(figure, kind) {
    const spec = JSON.parse(figure.dataset.chart);
    const canvas = figure.querySelector("canvas");
    if (figure._chart) { figure._chart.destroy(); figure._chart = null; }
    figure.querySelectorAll(".chart-switch button").forEach((b) =>
      b.setAttribute("aria-pressed", String(b.dataset.kind === kind)));
    canvas.hidden = kind === "none";
    const png = figure.querySelector(".chart-png");
    if (png) png.hidden = kind === "none";
    figure.dataset.kind = kind;
    if (kind === "none" || typeof Chart === "undefined") return;
    const axis = (title) => ({ title: { display: true, text: title } });
    const points = chartPoints(figure, spec);
    const scales = { x: axis(spec.x_title), y: axis(spec.y_title) };
    if (spec.series.some((s) => s.axis === "y2")) {  // percentages beside counts: an axis of their own
      scales.y2 = { ...axis(spec.y2_title), position: "right", grid: { drawOnChartArea: false } };
    }
    figure._chart = new Chart(canvas, {
      type: kind,
      data: {
        labels: points.map((k) => spec.labels[k]),
        datasets: spec.series.map((s, i) => ({
          label: s.name, data: points.map((k) => s.data[k]), yAxisID: s.axis || "y",
          borderColor: COLORS[i % COLORS.length],
          backgroundColor: COLORS[i % COLORS.length] + (kind === "bar" ? "cc" : "33"), tension: 0.2,
        })),
      },
      options: { animation: false, responsive: true, maintainAspectRatio: false, scales,
                 plugins: { legend: { display: spec.series.length > 1 } } },
      plugins: [WHITE_BACKGROUND],
    });
  }

  // The chart as a PNG: white, with its title (the question) above it.
  function chartPng(figure) {
    const canvas = figure.querySelector("canvas");
    const scale = canvas.width / Math.max(1, canvas.clientWidth);
    const band = Math.round(36 * scale);
    const copy = document.createElement("canvas");
    copy.width = canvas.width;
    copy.height = canvas.height + band;
    const g = copy.getContext("2d");
    g.fillStyle = "#fff";
    g.fillRect(0, 0, copy.width, copy.height);
    g.fillStyle = "#1d2430";
    g.font = "600 " + Math.round(16 * scale) + "px system-ui, sans-serif";
    g.textBaseline = "middle";
    let title = figure.dataset.title || "";
    const room = copy.width - 16 * scale;
    while (title.length > 1 && g.measureText(title).width > room) title = title.slice(0, -2) + "…";
    g.fillText(title, 8 * scale, band / 2);
    g.drawImage(canvas, 0, band);
    return copy.toDataURL("image/png");
  }

  function setUpCharts() {
    document.querySelectorAll("figure.chart[data-chart]").forEach((figure) => {
      const key = figure.dataset.remember ? "askdb-chart-" + figure.dataset.remember : null;
      let kind = JSON.parse(figure.dataset.chart).kind;
      try { kind = (key && window.localStorage.getItem(key)) || kind; } catch (e) { /* storage off */ }
      drawChart(figure, kind);
      figure.querySelectorAll(".chart-switch button").forEach((button) =>
        button.addEventListener("click", () => {
          drawChart(figure, button.dataset.kind);
          try { if (key) window.localStorage.setItem(key, button.dataset.kind); } catch (e) { /* storage off */ }
        }));
      const png = figure.querySelector(".chart-png");
      if (png) png.addEventListener("click", () => { png.href = chartPng(figure); });
    });
  }

  // The table's row filter: the chart follows the rows it leaves shown.
  function filterChart(result, table, filtering) {
    const figure = result.querySelector("figure.chart[data-chart]");
    if (!figure) return;
    figure._shownRows = filtering ? new Set(Array.from(table.tBodies[0].rows)
      .filter((row) => !row.hidden).map((row) => Number(row.dataset.row))) : null;
    drawChart(figure, figure.dataset.kind);
  }

  // -- result tables: sort by a header, filter the rows shown ---------------------------

  function cellValue(td) {
    if (td.classList.contains("null")) return null;
    const text = td.textContent;
    if (td.classList.contains("num")) return Number(text.replace(/,/g, ""));
    return text;
  }

  function sortTable(table, th) {
    const index = Array.from(th.parentNode.children).indexOf(th);
    const descending = th.getAttribute("aria-sort") === "ascending";
    table.querySelectorAll("th").forEach((h) => h.removeAttribute("aria-sort"));
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    const collator = new Intl.Collator(document.documentElement.lang, { numeric: true });
    rows.sort((a, b) => {
      const x = cellValue(a.cells[index]), y = cellValue(b.cells[index]);
      if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;  // NULLs last
      const order = typeof x === "number" && typeof y === "number" ? x - y : collator.compare(String(x), String(y));
      return descending ? -order : order;
    });
    rows.forEach((row) => body.appendChild(row));
  }

  function setUpTables() {
    document.querySelectorAll(".result").forEach((result) => {
      const table = result.querySelector("table.rows");
      if (!table) return;
      // A click anywhere on a header sorts. Several pages: its link sorts the whole result on
      // the server. One page: here, in place.
      const paged = result.querySelector(".pager") !== null;
      table.querySelectorAll("th[data-column]").forEach((th) => {
        const link = th.querySelector("a.sort");
        th.addEventListener("click", (event) => {
          if (paged) {
            if (event.target !== link) link.click();
            return;
          }
          event.preventDefault();
          sortTable(table, th);
        });
      });
      const filter = result.querySelector(".row-filter");
      if (!filter) return;
      filter.hidden = false;
      filter.addEventListener("input", () => {
        const needle = filter.value.trim().toLowerCase();
        Array.from(table.tBodies[0].rows).forEach((row) => {
          row.hidden = needle !== "" && !row.textContent.toLowerCase().includes(needle);
        });
        filterChart(result, table, needle !== "");
      });
    });
  }

  // -- small helpers: confirmation, copy SQL, the schema panel ---------------------------

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
    document.querySelectorAll("form[data-confirm]").forEach((form) => {
      form.addEventListener("submit", (event) => { if (!window.confirm(form.dataset.confirm)) event.preventDefault(); });
    });
  }

  function setUpCopy() {
    document.querySelectorAll("button.copy-sql").forEach((button) => {
      button.addEventListener("click", () => {
        navigator.clipboard.writeText(button.dataset.sql).then(() => { button.textContent = button.dataset.done; });
      });
    });
  }

  function setUpSchema(form) {
    const panel = document.querySelector(".schema-panel");
    if (!panel) return;
    const filter = panel.querySelector(".schema-filter");
    filter.addEventListener("input", () => {
      const needle = filter.value.trim().toLowerCase();
      panel.querySelectorAll(".schema-table").forEach((table) => {
        const columns = table.querySelectorAll(".schema-columns li");
        let any = needle === "" || table.dataset.name.includes(needle);
        columns.forEach((c) => {
          const hit = needle === "" || table.dataset.name.includes(needle) || c.dataset.name.includes(needle);
          c.hidden = !hit;
          any = any || hit;
        });
        table.hidden = !any;
        table.querySelector("details").open = needle !== "" && any;
      });
    });
    if (!form) return;
    panel.querySelectorAll("button.column-name").forEach((button) => {
      button.addEventListener("click", () => {
        const box = form.question;
        const at = box.selectionStart ?? box.value.length;
        const before = box.value.slice(0, at), after = box.value.slice(at);
        const word = (before && !/\s$/.test(before) ? " " : "") + button.dataset.insert + " ";
        box.value = before + word + after;
        box.focus();
        box.selectionStart = box.selectionEnd = (before + word).length;
      });
    });
  }

  // -- a running turn ------------------------------------------------------------------
  // The page asks through /api/chat and, once the turn has started (its question saved),
  // shows the conversation's own page, which renders the running turn's card and follows
  // its events: each step lands in that card, whether the page was just opened or reloaded.

  function stepItem(step) {
    const li = document.createElement("li");
    li.className = "step step-" + step.step_type;
    li.dataset.stepIndex = step.step_index;
    const details = document.createElement("details");
    const summary = document.createElement("summary");
    const kind = document.createElement("span");
    kind.className = "step-kind";
    kind.textContent = step.action || step.step_type;
    summary.appendChild(kind);
    const shown = Object.entries(step.args || {}).filter(([, v]) => v !== null && v !== "");
    if (shown.length) {  // as the server writes them (pages.step_arguments)
      const args = document.createElement("code");
      args.className = "step-args";
      args.textContent = shown.map(([k, v]) =>
        k + ": " + (typeof v === "string" ? v.split(/\s+/).join(" ").trim() : JSON.stringify(v))).join(" · ");
      summary.append(" ", args);
    }
    const meta = document.createElement("span");
    meta.className = "muted";
    meta.textContent = " " + Math.round(step.duration_ms || 0) + " ms";
    summary.appendChild(meta);
    details.appendChild(summary);
    if (step.thought) {
      const thought = document.createElement("p");
      thought.className = "thought";
      thought.textContent = step.thought;
      details.appendChild(thought);
    }
    if (step.observation) {
      const pre = document.createElement("pre");
      pre.className = "observation";
      pre.textContent = step.observation;
      details.appendChild(pre);
    }
    li.appendChild(details);
    return li;
  }

  function showStep(card, step) {
    const list = card.querySelector(".step-list");
    if (list.querySelector('[data-step-index="' + step.step_index + '"]')) return;
    list.appendChild(stepItem(step));
    const count = list.children.length;
    card.querySelector(".steps-count").textContent = count + " " + (count === 1 ? T.step : T.steps);
    const thinking = card.querySelector(".thinking");
    if (thinking) thinking.hidden = true;
  }

  function showError(message) {
    const box = document.getElementById("ask-error");
    box.textContent = message;
    box.hidden = false;
  }

  function readEvents(response, onEvent) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    const pump = () => reader.read().then(({ value, done }) => {
      if (done) return;
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
        if (data && onEvent(name, JSON.parse(data)) === false) { reader.cancel(); return; }
      }
      return pump();
    });
    return pump();
  }

  async function ask(form) {
    const button = form.querySelector("button[type=submit]");
    const body = { question: form.question.value, thread_id: form.thread_id.value || null };
    if (form.source && form.source.value) body.source = form.source.value;  // a new conversation's source
    button.disabled = true;
    document.getElementById("ask-error").hidden = true;
    document.getElementById("ask-thinking").hidden = false;
    try {
      const response = await fetch("/api/chat", {
        method: "POST", body: JSON.stringify(body),
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      });
      if (!response.ok) {
        const problem = await response.json().catch(() => ({ detail: response.statusText }));
        throw new Error(problem.detail || response.status);
      }
      // The turn runs on the server whatever this page does: show it on its own page at once.
      await readEvents(response, (name, data) => {
        if (!data.thread_id) return true;
        showConversation(data.thread_id);
        return false;
      });
    } catch (error) {
      document.getElementById("ask-thinking").hidden = true;
      showError(error.message);
      button.disabled = false;
    }
  }

  function showConversation(threadId) {
    const path = "/c/" + threadId;
    if (window.location.pathname === path) {
      window.location.hash = "turn-last";
      window.location.reload();
    } else {
      window.location.assign(path + "#turn-last");
    }
  }

  // The answer's text as the model writes it (when the endpoint streams): a preview, replaced
  // by the stored answer when the turn ends; a step written or a reply begun again clears it.
  function showDraft(card, event) {
    const draft = card.querySelector(".answer-draft");
    if (!draft) return;
    if (event.restart) draft.textContent = "";
    draft.textContent += event.text || "";
    draft.hidden = !draft.textContent;
    const thinking = card.querySelector(".thinking");
    if (thinking && draft.textContent) thinking.hidden = true;
  }

  function follow(card, url) {
    const source = new EventSource(url);
    source.addEventListener("step", (e) => {
      showStep(card, JSON.parse(e.data).step);
      showDraft(card, { restart: true });
    });
    source.addEventListener("draft", (e) => showDraft(card, JSON.parse(e.data)));
    source.addEventListener("done", () => { source.close(); window.location.reload(); });
  }

  // A refused edit or correction comes back as this page: land on its reason. The form's action
  // carries its box's anchor (the browser focuses the box); this centres the reason below it.
  function showRefusal() {
    const reason = document.querySelector(".edit-sql[open] p.error, .right-sql[open] p.error");
    if (!reason) return false;
    reason.scrollIntoView({ block: "center" });
    return true;
  }

  document.addEventListener("DOMContentLoaded", () => {
    const words = document.body.dataset.words;
    if (words) T = JSON.parse(words);
    setUpCharts();
    setUpTables();
    setUpConfirm();
    setUpCopy();
    const refused = showRefusal();
    const form = document.getElementById("ask-form");
    setUpSchema(form);
    if (!form) return;
    form.addEventListener("submit", (event) => { event.preventDefault(); ask(form); });
    // Another source: its schema panel and suggestions (the page is rendered for one source).
    const chooser = form.querySelector("[data-choose-source]");
    if (chooser) chooser.addEventListener("change", () => {
      window.location.assign("/new?source=" + encodeURIComponent(chooser.value));
    });
    document.querySelectorAll("form.suggestion").forEach((suggestion) => {
      suggestion.addEventListener("submit", (event) => {
        event.preventDefault();
        form.question.value = event.submitter ? event.submitter.value : suggestion.querySelector("button").value;
        ask(form);
      });
    });
    const running = document.querySelector(".turn[data-running]");
    if (form.dataset.follow && running) follow(running, form.dataset.follow);
    if (!refused && window.location.hash === "#turn-last") {
      const last = document.querySelector(".turn[data-last]");
      if (last) last.scrollIntoView();
    }
  });
})();
