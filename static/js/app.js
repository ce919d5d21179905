// Workbench: small progressive enhancements. Every page works without this.
"use strict";

// Elements with data-live="/path" are refreshed in place from the same page
// every data-live-interval milliseconds (e.g. the GPU table's live figures).
function startLiveRegions() {
  document.querySelectorAll("[data-live]").forEach((el) => {
    const url = el.getAttribute("data-live");
    const every = parseInt(el.getAttribute("data-live-interval") || "5000", 10);
    const selector = el.id ? "#" + el.id : "[data-live='" + url + "']";
    setInterval(async () => {
      if (document.hidden) return;
      try {
        const res = await fetch(url, { headers: { "Accept": "text/html" }, credentials: "same-origin" });
        if (!res.ok) return;
        const doc = new DOMParser().parseFromString(await res.text(), "text/html");
        const fresh = doc.querySelector(selector);
        if (fresh) el.replaceChildren(...fresh.childNodes);
      } catch (_) { /* offline for a moment: try again next tick */ }
    }, every);
  });
}

// Forms with data-confirm="question" ask before submitting.
function confirmForms() {
  document.querySelectorAll("form[data-confirm]").forEach((form) => {
    form.addEventListener("submit", (ev) => {
      if (!window.confirm(form.getAttribute("data-confirm"))) ev.preventDefault();
    });
  });
}

document.addEventListener("DOMContentLoaded", () => {
  startLiveRegions();
  confirmForms();
});

// A workbench page with data-events follows the workbench's state over
// server-sent events: progress updates in place, a new state reloads the page
// (so buttons match). Without JavaScript a meta refresh does the same.
function followWorkbench() {
  const el = document.querySelector("[data-events]");
  if (!el || !window.EventSource) return;
  const shown = el.getAttribute("data-state");
  const es = new EventSource(el.getAttribute("data-events"));
  es.addEventListener("state", (ev) => {
    const u = JSON.parse(ev.data);
    if (u.state !== shown) { es.close(); window.location.reload(); return; }
    const bar = el.querySelector("progress");
    if (bar) { bar.value = u.progress; bar.textContent = u.progress + "%"; }
  });
}
document.addEventListener("DOMContentLoaded", followWorkbench);
