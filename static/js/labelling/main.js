/* Keyboard-first labelling and adjudication: the entry point that wires the modules to the page. Also counts
 * active time on the item, and renews the lease while the page is open. The server enforces everything that
 * matters (leases, blindness); this is comfort. */

import { createItemClock } from "./clock.js";
import { criterionKey, labellingKey } from "./keys.js";
import { RENEW_MS, renewLease, showLeases } from "./lease.js";
import { clearPreloaded, restoredFromCache, showPreloaded } from "./preload.js";

const form = () => document.querySelector("form[data-keyboard-form]");
const visible = () => document.visibilityState === "visible" && document.hasFocus();
const clock = createItemClock({ visible });
let renewTimer = null;
const LEASE_TICK_MS = 30 * 1000;

function pick(value) {
  const f = form();
  const radio = f && f.querySelector("input[name=verdict][value=" + value + "]");
  if (radio) { radio.checked = true; radio.focus(); }
}

function submit() {
  const f = form();
  if (!f) { return; }
  if (!f.checkValidity()) { f.reportValidity(); return; }
  if (f.requestSubmit) { f.requestSubmit(); } else { f.submit(); }
}

function toggleHelp() {
  const help = document.getElementById("kbd-help");
  if (!help) { return; }
  if (help.open) { help.close(); } else { help.showModal(); }
}

function renew() { renewLease(form()); }

function armRenewal() {
  if (renewTimer) { clearInterval(renewTimer); }
  const f = form();
  if (f && f.dataset.renewUrl) { renewTimer = setInterval(renew, RENEW_MS); }
}

const section = () => document.getElementById("item");
const holder = () => document.getElementById("preloaded");

function onItemShown() {
  clock.start();
  showLeases(document);
  armRenewal();
  clearPreloaded(section(), holder());
  const f = form();
  if (f) {
    f.setAttribute("tabindex", "-1");
    f.focus({ preventScroll: true });
  } else {
    const confirm = document.querySelector("[data-confirm-form] [data-keep]");
    if (confirm) { confirm.focus(); }
  }
}

const groups = () => Array.from(document.querySelectorAll("form[data-keyboard-form] fieldset[data-criterion]"))
  .filter((g) => g.querySelector("input[type=radio]"));

/* Focus a criterion group on its chosen value (or its first), as Tab does for a radio group. */
function focusGroup(group) {
  const radio = group.querySelector("input[type=radio]:checked") || group.querySelector("input[type=radio]");
  if (radio) { radio.focus(); }
}

/* A key inside a criterion's group: pick that value, then move on to the next group, or back to the form
 * (where 1 and 2 are the verdict again) after the last. True when the key was the group's. */
function criterionPick(event) {
  const group = event.target && event.target.closest && event.target.closest("fieldset[data-criterion]");
  if (!group || !group.closest("form[data-keyboard-form]")) { return false; }
  const radios = Array.from(group.querySelectorAll("input[type=radio]"));
  const at = criterionKey(event, { kind: group.dataset.kind, count: radios.length });
  if (at === null) { return false; }
  event.preventDefault();
  radios[at].checked = true;
  const all = groups();
  const next = all[all.indexOf(group) + 1];
  if (next) { focusGroup(next); } else { form().focus({ preventScroll: true }); }
  return true;
}

/* Open a panel (skip, flag, previous, guideline) and put the focus in it. */
function openPanel(selector, focusSelector) {
  const panel = document.querySelector(selector);
  if (!panel) { return; }
  panel.open = true;
  const target = focusSelector && panel.querySelector(focusSelector);
  if (target) { target.focus(); } else { panel.querySelector("summary").focus(); }
}

const actions = {
  closeHelp: () => document.getElementById("kbd-help").close(),
  submit,
  leaveText: (event) => {
    event.target.blur();
    const f = form();
    if (f) { f.focus({ preventScroll: true }); }
  },
  correct: () => pick("correct"),
  incorrect: () => pick("incorrect"),
  focusText: (event) => {
    const text = form().querySelector("textarea[data-text-key=r]");
    if (text) { event.preventDefault(); text.focus(); }
  },
  help: toggleHelp,
  criteria: () => { const first = groups()[0]; if (first) { focusGroup(first); } },
  skip: () => openPanel("details[data-skip]", "input[name=reason]"),
  flag: () => openPanel("details[data-flag]", "input[name=reason]"),
  previous: () => openPanel("details[data-previous]", "a"),
  guideline: () => {
    const panel = document.querySelector("details[data-guideline]");
    if (panel) { panel.open = !panel.open; }
  },
};

document.addEventListener("keydown", (event) => {
  const help = document.getElementById("kbd-help");
  if (!(help && help.open) && criterionPick(event)) { return; }
  const key = labellingKey(event, {
    helpOpen: !!(help && help.open),
    hasForm: !!form(),
    inForm: (el) => !!el.closest("form[data-keyboard-form]"),
  });
  if (!key) { return; }
  if (key.prevent) { event.preventDefault(); }
  actions[key.action](event);
});

// Active time is stamped just before the form leaves (capture phase runs before htmx's handler).
document.addEventListener("submit", (event) => {
  const input = event.target.querySelector && event.target.querySelector("input[name=active_seconds]");
  if (input) { input.value = clock.seconds(); }
}, true);

document.addEventListener("visibilitychange", () => { if (visible()) { clock.resume(); } else { clock.pause(); } });
window.addEventListener("blur", clock.pause);
window.addEventListener("focus", clock.resume);
document.addEventListener("htmx:afterSwap", onItemShown);
// The label is on its way: show the preloaded next item at once (the server's answer replaces it).
document.addEventListener("htmx:beforeRequest", (event) => {
  if (event.target && event.target.matches && event.target.matches("form[data-keyboard-form]")) {
    showPreloaded(section(), holder());
  }
});
// A 409 on the item is an answer to show (a label that needs an explicit change), not a failure.
document.addEventListener("htmx:beforeSwap", (event) => {
  const d = event.detail;
  if (d && d.xhr && d.xhr.status === 409 && d.target && d.target.id === "item") { d.shouldSwap = true; d.isError = false; }
});
// A failed request leaves the item just labelled on the page: show it again.
document.addEventListener("htmx:afterRequest", (event) => {
  if (event.detail && event.detail.failed) { clearPreloaded(section(), holder()); }
});
// Back/Forward may restore this page from the browser's cache with an item already labelled: reload it.
window.addEventListener("pageshow", (event) => { if (restoredFromCache(event)) { window.location.reload(); } });
// For the console and the browser tests: renew now rather than at the next tick.
window.evalappLabelling = { renew };
setInterval(() => showLeases(document), LEASE_TICK_MS);
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", onItemShown);
} else {
  onItemShown();
}
