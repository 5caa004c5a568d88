/* Renewing the lease on the item while its page is open. */

export const RENEW_MS = 5 * 60 * 1000;

/* How long the item stays yours, as the page says it: "held for 29 min" (whole minutes, rounded down,
 * "less than a minute" under one), or that it has run out. */
export function leaseText(expiresIso, nowMs = Date.now()) {
  const left = Date.parse(expiresIso) - nowMs;
  if (Number.isNaN(left)) { return ""; }
  if (left <= 0) { return "lease ran out: the item may go to someone else"; }
  const minutes = Math.floor(left / 60000);
  if (minutes < 1) { return "held for less than a minute"; }
  if (minutes < 120) { return `held for ${minutes} min`; }
  return `held for ${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/* Rewrite every lease on the page from its datetime attribute. */
export function showLeases(root, nowMs = Date.now()) {
  root.querySelectorAll("time.lease").forEach((el) => {
    el.textContent = leaseText(el.getAttribute("datetime"), nowMs);
    el.title = `until ${el.getAttribute("datetime")}`;
  });
}

export function csrf(form) {
  const input = form.querySelector("input[name=csrfmiddlewaretoken]");
  return input ? input.value : "";
}

/* One renewal: the new expiry shown, or (409) a note that the lease was lost; offline is quietly retried at
 * the next tick. `fetchImpl` and `now` are there for the tests. */
export function renewLease(form, { fetchImpl = (...args) => globalThis.fetch(...args), now = () => Date.now() } = {}) {
  if (!form || !form.dataset.renewUrl) { return Promise.resolve(); }
  return fetchImpl(form.dataset.renewUrl, {
    method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": csrf(form), "Accept": "application/json" },
  })
    .then((response) => {
      if (response.status === 409) {
        const note = form.ownerDocument.createElement("p");
        note.className = "errors";
        note.setAttribute("role", "alert");
        note.textContent = "Your lease on this item was lost; reload the page for the next item.";
        form.prepend(note);
        return null;
      }
      return response.ok ? response.json() : null;
    })
    .then((body) => {
      const lease = form.querySelector("time.lease");
      if (body && lease) { lease.setAttribute("datetime", body.lease_expires_at); lease.textContent = leaseText(body.lease_expires_at, now()); }
    })
    .catch(() => { /* offline for a moment: the next tick tries again */ });
}
