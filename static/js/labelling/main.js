/* Keyboard-first labelling and adjudication: the entry point that wires the modules to the page. Also counts
 * active time on the item, and renews the lease while the page is open. The server enforces everything that
 * matters (leases, blindness); this is comfort. */

import { createItemClock } from "./clock.js";
import { labellingKey } from "./keys.js";
import { RENEW_MS, renewLease, showLeases } from "./lease.js";

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

function onItemShown() {
  clock.start();
  showLeases(document);
  armRenewal();
  const f = form();
  if (f) { f.setAttribute("tabindex", "-1"); f.focus({ preventScroll: true }); }
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
};

document.addEventListener("keydown", (event) => {
  const help = document.getElementById("kbd-help");
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
// For the console and the browser tests: renew now rather than at the next tick.
window.evalappLabelling = { renew };
setInterval(() => showLeases(document), LEASE_TICK_MS);
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", onItemShown);
} else {
  onItemShown();
}
