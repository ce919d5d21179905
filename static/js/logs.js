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
    // The words come from the page, in its reader's language (the
    // script keeps none of its own); English if an attribute is missing.
    const say = (name, fallback) => link.getAttribute("data-label-" + name) || fallback;
    // With the script the link is a toggle: a button to assistive
    // technology (aria-pressed says whether it follows), pressed with
    // Space as well as Enter.
    link.setAttribute("role", "button");
    link.setAttribute("aria-pressed", "false");
    link.addEventListener("keydown", (ev) => {
      if (ev.key === " ") { ev.preventDefault(); link.click(); }
    });

    const stop = () => {
      if (ctl) ctl.abort();
      ctl = null;
      link.textContent = say("follow", "follow live");
      link.setAttribute("aria-pressed", "false");
    };

    link.addEventListener("click", async (ev) => {
      ev.preventDefault();
      if (ctl) { stop(); return; }
      ctl = new AbortController();
      const mine = ctl;
      link.textContent = say("stop", "stop following");
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
        if (ctl === mine) { stop(); link.textContent = say("ended", "follow live (ended)"); }
      } catch (e) {
        if (ctl === mine) { stop(); link.textContent = say("failed", "follow live (could not connect — try again)"); }
      }
    });
  }
  document.addEventListener("DOMContentLoaded", setup);
})();
