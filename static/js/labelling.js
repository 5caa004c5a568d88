/* Keyboard-first labelling and adjudication: 1 correct, 2 incorrect, r rationale/reason, Enter submit and
   next, Esc leaves the text box, ? help. Also: counts active time on the item, and renews the lease while
   the page is open. The server enforces everything that matters (leases, blindness); this is comfort. */
(function () {
  "use strict";
  var RENEW_MS = 5 * 60 * 1000;
  var activeMs = 0, since = null, renewTimer = null;

  function form() { return document.querySelector("form[data-keyboard-form]"); }
  function visible() { return document.visibilityState === "visible" && document.hasFocus(); }
  function startClock() { activeMs = 0; since = visible() ? Date.now() : null; }
  function pauseClock() { if (since !== null) { activeMs += Date.now() - since; since = null; } }
  function resumeClock() { if (since === null && visible()) { since = Date.now(); } }
  // The server takes at most a day of active time on one item; a tab left open longer reports a day.
  function activeSeconds() { pauseClock(); resumeClock(); return Math.min(activeMs / 1000, 86400).toFixed(1); }

  function csrf(f) {
    var input = f.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function pick(value) {
    var f = form();
    var radio = f && f.querySelector("input[name=verdict][value=" + value + "]");
    if (radio) { radio.checked = true; radio.focus(); }
  }

  function submit() {
    var f = form();
    if (!f) { return; }
    if (!f.checkValidity()) { f.reportValidity(); return; }
    if (f.requestSubmit) { f.requestSubmit(); } else { f.submit(); }
  }

  function toggleHelp() {
    var help = document.getElementById("kbd-help");
    if (!help) { return; }
    if (help.open) { help.close(); } else { help.showModal(); }
  }

  function renew() {
    var f = form();
    if (!f || !f.dataset.renewUrl) { return; }
    fetch(f.dataset.renewUrl, {method: "POST", credentials: "same-origin",
                               headers: {"X-CSRFToken": csrf(f), "Accept": "application/json"}})
      .then(function (response) {
        if (response.status === 409) {
          var note = document.createElement("p");
          note.className = "errors";
          note.setAttribute("role", "alert");
          note.textContent = "Your lease on this item was lost; reload the page for the next item.";
          f.prepend(note);
          return null;
        }
        return response.ok ? response.json() : null;
      })
      .then(function (body) {
        var lease = f.querySelector("time.lease");
        if (body && lease) { lease.textContent = body.lease_expires_at; lease.setAttribute("datetime", body.lease_expires_at); }
      })
      .catch(function () { /* offline for a moment: the next tick tries again */ });
  }

  function armRenewal() {
    if (renewTimer) { clearInterval(renewTimer); }
    var f = form();
    if (f && f.dataset.renewUrl) { renewTimer = setInterval(renew, RENEW_MS); }
  }

  function onItemShown() {
    startClock();
    armRenewal();
    var f = form();
    if (f) { f.setAttribute("tabindex", "-1"); f.focus({preventScroll: true}); }
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var help = document.getElementById("kbd-help");
    if (help && help.open) {
      if (event.key === "?") { event.preventDefault(); help.close(); }
      return;
    }
    var target = event.target;
    var typing = target && (target.tagName === "TEXTAREA" ||
      (target.tagName === "INPUT" && /^(text|search|email|password|number)$/.test(target.type)));
    if (typing) {
      if (event.key === "Enter" && !event.shiftKey && target.closest("form[data-keyboard-form]")) {
        event.preventDefault();
        submit();
      } else if (event.key === "Escape") {
        target.blur();
        var f = form();
        if (f) { f.focus({preventScroll: true}); }
      }
      return;
    }
    if (!form()) { return; }
    switch (event.key) {
      case "1": event.preventDefault(); pick("correct"); break;
      case "2": event.preventDefault(); pick("incorrect"); break;
      case "r": {
        var text = form().querySelector("textarea[data-text-key=r]");
        if (text) { event.preventDefault(); text.focus(); }
        break;
      }
      case "Enter": event.preventDefault(); submit(); break;
      case "?": event.preventDefault(); toggleHelp(); break;
      default: break;
    }
  });

  // Active time is stamped just before the form leaves (capture phase runs before htmx's handler).
  document.addEventListener("submit", function (event) {
    var input = event.target.querySelector && event.target.querySelector("input[name=active_seconds]");
    if (input) { input.value = activeSeconds(); }
  }, true);

  document.addEventListener("visibilitychange", function () { if (visible()) { resumeClock(); } else { pauseClock(); } });
  window.addEventListener("blur", pauseClock);
  window.addEventListener("focus", resumeClock);
  document.addEventListener("htmx:afterSwap", onItemShown);
  // For the console and the browser tests: renew now rather than at the next tick.
  window.evalappLabelling = {renew: renew};
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", onItemShown);
  } else {
    onItemShown();
  }
})();
