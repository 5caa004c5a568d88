/* Renewing the lease on the item while its page is open. */

export const RENEW_MS = 5 * 60 * 1000;

export function csrf(form) {
  const input = form.querySelector("input[name=csrfmiddlewaretoken]");
  return input ? input.value : "";
}

/* One renewal: the new expiry shown, or (409) a note that the lease was lost; offline is quietly retried at
 * the next tick. `fetchImpl` is there for the tests. */
export function renewLease(form, { fetchImpl = (...args) => globalThis.fetch(...args) } = {}) {
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
      if (body && lease) { lease.textContent = body.lease_expires_at; lease.setAttribute("datetime", body.lease_expires_at); }
    })
    .catch(() => { /* offline for a moment: the next tick tries again */ });
}
