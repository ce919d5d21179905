// Workbench page: "follow live" tails the container's log inside the page
// (the logs endpoint streams while following). Without JavaScript the link
// shows the last lines as plain text.
"use strict";

(function () {
  const MAX_CHARS = 200000; // keep the page light on a chatty notebook

  function setup() {
    const link = document.querySelector("[data-follow-logs]");
    const pre = document.querySelector("[data-testid=wb-logs]");
    if (!link || !pre || !window.fetch || !window.TextDecoder) return;
    let ctl = null;

    const stop = () => {
      if (ctl) ctl.abort();
      ctl = null;
      link.textContent = "follow live";
      link.removeAttribute("aria-pressed");
    };

    link.addEventListener("click", async (ev) => {
      ev.preventDefault();
      if (ctl) { stop(); return; }
      ctl = new AbortController();
      const mine = ctl;
      link.textContent = "stop following";
      link.setAttribute("aria-pressed", "true");
      pre.setAttribute("data-following", "true");
      try {
        const res = await fetch(link.getAttribute("data-follow-logs"), { credentials: "same-origin", signal: mine.signal });
        if (!res.ok || !res.body) throw new Error("status " + res.status);
        pre.textContent = "";
        pre.removeAttribute("data-kept");
        const reader = res.body.getReader();
        const dec = new TextDecoder();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
          let text = pre.textContent + dec.decode(value, { stream: true });
          if (text.length > MAX_CHARS) text = text.slice(text.length - MAX_CHARS);
          pre.textContent = text;
          if (atBottom) pre.scrollTop = pre.scrollHeight;
        }
        if (ctl === mine) { stop(); link.textContent = "follow live (ended)"; }
      } catch (e) {
        if (ctl === mine) { stop(); link.textContent = "follow live (could not connect — try again)"; }
      }
    });
  }
  document.addEventListener("DOMContentLoaded", setup);
})();
