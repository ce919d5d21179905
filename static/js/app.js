// Workbench: small progressive enhancements. Every page works without this.
"use strict";

// Elements with data-live="/path" are refreshed in place from the same page
// every data-live-interval milliseconds (e.g. the GPU table's live figures).
// Not while someone works in the region — a form of it open (a <details>
// such as the GPU table's "Share…") or focus inside it: the refresh closed
// the form, reset what was typed and the error shown with it, and moved
// focus to the page, every 5 seconds. data-live-ticks counts the looks
// (the browser tests wait on it). A region that a look brings back without
// data-live has reached its end (a test or a pull done): it is put in and
// the asking stops, as the page without JavaScript stops reloading.
function startLiveRegions() {
  // edited tells whether a field of the region holds what someone typed
  // and did not save (a form closed unsaved): the next look puts the
  // stored values back, as it did when every look replaced the region.
  const edited = (el) => Array.from(el.querySelectorAll("input, textarea, select")).some((f) =>
    f.type === "checkbox" || f.type === "radio" ? f.checked !== f.defaultChecked
      : f.tagName === "SELECT" ? Array.from(f.options).some((o) => o.selected !== o.defaultSelected)
      : f.value !== f.defaultValue);
  document.querySelectorAll("[data-live]").forEach((el) => {
    const url = el.getAttribute("data-live");
    const every = parseInt(el.getAttribute("data-live-interval") || "5000", 10);
    const selector = el.id ? "#" + el.id : "[data-live='" + url + "']";
    let ticks = 0;
    // shown is the region's markup as last put in: a look that brings the
    // same leaves the nodes alone. Replacing them every tick took away a
    // text selection (a workbench id being copied), made screen readers
    // announce the region again, and raced whatever held a node of it.
    let shown = el.innerHTML;
    const timer = setInterval(async () => {
      el.setAttribute("data-live-ticks", String(++ticks));
      if (document.hidden || el.contains(document.activeElement) || el.querySelector("details[open]")) return;
      try {
        const res = await fetch(url, { headers: { "Accept": "text/html" }, credentials: "same-origin" });
        if (!res.ok) return;
        const doc = new DOMParser().parseFromString(await res.text(), "text/html");
        const fresh = doc.querySelector(selector);
        if (fresh && (fresh.innerHTML !== shown || edited(el))) {
          shown = fresh.innerHTML;
          const before = announcedStates(el);
          el.replaceChildren(...fresh.childNodes);
          announceStateChanges(before, announcedStates(el));
        }
        if (fresh && !fresh.hasAttribute("data-live")) {
          clearInterval(timer);
          el.removeAttribute("data-live");
        }
      } catch (_) { /* offline for a moment: try again next tick */ }
    }, every);
  });
}

// A live region's rows that carry data-announce-state (the home page's
// list of workbenches) say a new state in the layout's #announcer: "thesis:
// running". The list changed silently before, so a screen reader never
// heard that a queued launch started or a workbench stopped. Only states
// are said, not the costs that change every look, and nothing at all when
// no state changed: no flood.
function announcedStates(el) {
  const out = new Map();
  el.querySelectorAll("[data-announce-state]").forEach((row) => {
    out.set(row.getAttribute("data-id"), { state: row.getAttribute("data-announce-state"), text: row.getAttribute("data-announce-text") || "" });
  });
  return out;
}
function announceStateChanges(before, after) {
  const said = [];
  after.forEach((now, id) => {
    const was = before.get(id);
    if (was && was.state !== now.state && now.text) said.push(now.text);
  });
  const region = document.getElementById("announcer");
  if (region && said.length > 0) region.textContent = said.join("; ");
}

// Forms with data-confirm="question" ask before submitting; a delete form
// whose "delete my data" box is ticked asks data-confirm-delete-data instead.
// Listened for on the document, in the capture phase (before the submit
// listeners below), so a form a live region brings in asks too: listeners
// bound to each form at load were lost with the forms a refresh replaced.
// A yes marks the form answered (confirmed, and data_confirmed for the
// data): the server asks on a page of its own only where no script ran.
document.addEventListener("submit", (ev) => {
  const form = ev.target;
  if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-confirm")) return;
  const data = form.querySelector("input[name=delete_data]:checked") && form.getAttribute("data-confirm-delete-data");
  if (!window.confirm(data || form.getAttribute("data-confirm"))) {
    ev.preventDefault();
    return;
  }
  const mark = (name) => {
    if (form.querySelector("input[name=" + name + "]")) return;
    const done = document.createElement("input");
    done.type = "hidden"; done.name = name; done.value = "true";
    form.appendChild(done);
  };
  mark("confirmed");
  if (data) mark("data_confirmed");
}, true);

// submitting is set while a form this page submitted is on its way (a
// navigation the browser is waiting for). Reloading then would abort that
// POST: a Stop once died half-way like this. Listening on the document
// runs after the forms' own listeners, so a cancelled confirm is seen.
let submitting = false;
document.addEventListener("submit", (ev) => { if (!ev.defaultPrevented) submitting = true; });
window.addEventListener("pageshow", () => { submitting = false; });

// The button of a posted form shows that its request is on its way and
// cannot be pressed again: a Stop can take seconds while the container
// stops, and the page stood unchanged with the button live. Disabled a
// tick later, once the form's data (the button's own name and value with
// it) has been taken; the page that answers has fresh buttons, and one
// restored from the back-forward cache gets them back.
document.addEventListener("submit", (ev) => {
  const button = ev.submitter;
  if (ev.defaultPrevented || !button || (ev.target.method || "").toLowerCase() !== "post") return;
  setTimeout(() => {
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    button.classList.add("pending");
  }, 0);
});
window.addEventListener("pageshow", () => {
  document.querySelectorAll("button.pending").forEach((b) => {
    b.disabled = false;
    b.removeAttribute("aria-busy");
    b.classList.remove("pending");
  });
});

// The launch form's booking select offers, with JavaScript, only the
// bookings that fit the chosen flavor (each option's data-flavors, one name
// a line); a booking that no longer fits goes back to "none". Without it
// every booking is offered and the server says when one does not fit.
function fitReservations() {
  const select = document.querySelector("select[name=reservation]");
  if (!select) return;
  const apply = () => {
    const chosen = document.querySelector("input[name=flavor]:checked");
    select.querySelectorAll("option[data-flavors]").forEach((opt) => {
      const fits = !chosen || opt.getAttribute("data-flavors").split("\n").includes(chosen.value);
      opt.disabled = !fits;
      opt.hidden = !fits;
      if (!fits && opt.selected) select.value = "";
    });
  };
  document.querySelectorAll("input[name=flavor]").forEach((r) => r.addEventListener("change", apply));
  apply();
}

document.addEventListener("DOMContentLoaded", () => {
  startLiveRegions();
  fitReservations();
});

// A workbench page with data-events follows the workbench's state over
// server-sent events: progress and the state badge update in place; a new
// state (or a stop failure) reloads the page so the buttons match, but never
// while a form submission of this page is in flight: its answer brings the
// new page. Without JavaScript a meta refresh does the same.
function followWorkbench() {
  const el = document.querySelector("[data-events]");
  if (!el || !window.EventSource) return;
  const shown = el.getAttribute("data-state");
  const shownError = el.getAttribute("data-stop-error") || "";
  // A starting workbench whose Pod Kubernetes holds reads "queued".
  const shownWaiting = el.getAttribute("data-waiting-for") || "";
  // The state as the badge names it (a Pod Kubernetes holds: "queued").
  const shownAs = shownWaiting === "kubernetes" ? "queued" : shown;
  // A preemptible run told to yield (or let off) stays running: the event
  // says so, and the page reloads to show or drop the notice.
  const shownYielding = el.getAttribute("data-yielding") === "true";
  // Stopped, its stop not recorded yet (the database cannot be written):
  // the event of its recording has no stop_not_recorded, and the page
  // reloads to drop the notice and show the buttons.
  const shownUnrecorded = el.getAttribute("data-stop-not-recorded") === "true";
  // The page says each state in its reader's language; the script keeps
  // no words of its own.
  let labels = {};
  try { labels = JSON.parse(el.getAttribute("data-state-labels") || "{}"); } catch (_) { /* English names */ }
  const es = new EventSource(el.getAttribute("data-events"));
  es.addEventListener("state", (ev) => {
    const u = JSON.parse(ev.data);
    const badge = el.querySelector("[data-testid=wb-state]");
    // Who holds a waiting workbench ("portal" while queued, "kubernetes"
    // while its Pod is Pending), as the page was rendered with.
    const waiting = u.waiting_for || "";
    const seen = waiting === "kubernetes" ? "queued" : u.state;
    const label = labels[seen] || seen;
    if (badge && badge.textContent !== label) {
      badge.textContent = label;
      badge.className = "state state-" + seen;
    }
    const bar = el.querySelector("progress");
    if (bar) { bar.value = u.progress; bar.textContent = u.progress + "%"; }
    const yieldingChanged = typeof u.yielding === "boolean" && u.yielding !== shownYielding;
    const recorded = shownUnrecorded && !u.stop_not_recorded;
    if ((u.state !== shown || waiting !== shownWaiting || (u.error || "") !== shownError || yieldingChanged || recorded) && !submitting) {
      es.close();
      if (seen !== shownAs) {
        const name = document.querySelector("[data-testid=wb-name]");
        announceAfterReload((name ? name.textContent.trim() + ": " : "") + label);
      }
      window.location.reload();
      return;
    }
    // The page has applied a live update and stays: tests wait for this
    // before reading the badge.
    el.setAttribute("data-followed", "1");
  });
}
document.addEventListener("DOMContentLoaded", followWorkbench);

// A form sent back with errors: each field named by an error (FieldError's
// data-field) is marked invalid and described by its message, and the
// first takes the focus, so a screen reader says which field is wrong and
// why, and a phone shows it without scrolling (focus stayed at the top of
// the page, the message far below, tied to nothing).
function markFieldErrors() {
  let first = null;
  document.querySelectorAll(".field-error[data-field]").forEach((msg) => {
    const scope = msg.closest("form") || document;
    const input = scope.querySelector("[name='" + CSS.escape(msg.getAttribute("data-field")) + "']");
    if (!input || input.type === "hidden") return;
    input.setAttribute("aria-invalid", "true");
    const ids = (input.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
    if (!ids.includes(msg.id)) ids.push(msg.id);
    input.setAttribute("aria-describedby", ids.join(" "));
    if (!first) first = input;
  });
  if (first && !document.querySelector("[autofocus]")) first.focus();
}
document.addEventListener("DOMContentLoaded", markFieldErrors);

// A secret shown once (a new token) takes the focus with its text
// selected, so the keyboard copies it at once (Ctrl+C): a <code> could be
// neither focused nor selected without a mouse.
function selectOnFocus() {
  const all = document.querySelectorAll("[data-select-on-focus]");
  all.forEach((el) => el.addEventListener("focus", () => window.getSelection().selectAllChildren(el)));
  if (all.length > 0 && !document.querySelector(".field-error[data-field]")) all[0].focus();
}
document.addEventListener("DOMContentLoaded", selectOnFocus);

// Screen readers say what changes in a live region, not a status that a
// page brings with it: a success message shown after a form (role=status
// at load) and the new state of a workbench, whose page reloads to show
// it, went unsaid. The layout's empty #announcer is filled a moment after
// load with both; the flash then drops its role, so it is not said twice.
const announceKey = "workbench-announce";
function announceAfterReload(text) {
  try {
    sessionStorage.setItem(announceKey, JSON.stringify({ path: location.pathname, text: text }));
  } catch (_) { /* storage off: the new state is read with the page */ }
}
function announceOnLoad() {
  const region = document.getElementById("announcer");
  if (!region) return;
  const parts = [];
  try {
    const pending = JSON.parse(sessionStorage.getItem(announceKey) || "null");
    sessionStorage.removeItem(announceKey);
    if (pending && pending.path === location.pathname && pending.text) parts.push(pending.text);
  } catch (_) { /* storage off or a bad value: nothing to say */ }
  const flash = document.querySelector("[data-testid=flash][data-kind=ok]");
  if (flash) {
    parts.push(flash.textContent.trim());
    flash.removeAttribute("role");
  }
  if (parts.length > 0) setTimeout(() => { region.textContent = parts.join(" "); }, 300);
}
document.addEventListener("DOMContentLoaded", announceOnLoad);

// The time zone page's "Use this browser's time zone" fills the field with
// the zone the browser runs in (shown only with JavaScript: without it,
// the zone is typed).
function offerBrowserZone() {
  const button = document.querySelector("[data-browser-zone]");
  const input = document.querySelector("input[name=time_zone]");
  let zone = "";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (_) { /* no Intl: typed */ }
  if (!button || !input || !zone) return;
  button.hidden = false;
  button.textContent = button.textContent + " (" + zone + ")";
  button.addEventListener("click", () => { input.value = zone; input.focus(); });
}
document.addEventListener("DOMContentLoaded", offerBrowserZone);
