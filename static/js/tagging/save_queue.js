/* The autosave queue of the question page.
 *
 * It holds what the server has (`saved`, at `revision`); what is pending is whatever `diff(saved)` reports
 * (the draft against it), so an edit made while a save is in flight is simply still pending afterwards.
 * One save runs at a time: a save asked for meanwhile is coalesced into one more round once it lands.
 * Each save carries its own client_key, and every retry of it resends the identical body, so it lands
 * exactly once however often the network fails. Network errors, 5xx, 408 and 429 are retried with backoff;
 * any other refusal stops, leaving the changes pending. A 409 (or a retried save that another expert has
 * overtaken) puts the queue in conflict: nothing more is sent until resolve() names the new baseline.
 *
 * No DOM here: the page passes in how to send, how to tell the time spent, and what to show.
 */

export const AUTOSAVE_MS = 800;          // debounce for typing
export const BACKOFF_FIRST_MS = 500;
export const BACKOFF_MAX_MS = 30000;
export const JITTER_MS = 200;

export function newClientKey() {
  if (globalThis.crypto && globalThis.crypto.randomUUID) return globalThis.crypto.randomUUID();
  return "k" + Date.now().toString(36) + Math.random().toString(36).slice(2);
}

export function isRetryable(status) {
  return status === null || status >= 500 || status === 408 || status === 429 || status < 400;
}

/*
 * send(body) -> Promise<Response-like {ok, status, json()}>, rejecting when the network failed.
 * diff(saved) -> the changes still to save, {} when none.
 * clock: {pending() -> seconds, consume(seconds)}.
 * onEvent({type, ...}): "idle" {revision}, "saving" {attempt}, "saved" {revision, replayed},
 *   "retrying" {status (null: network), wait}, "signed_out" {status}, "refused" {status, info}.
 * onSaved(data): after a save landed and the baseline moved, before anything else is shown.
 * onConflict(message, mine): shows the conflict; awaited.
 */
export function createSaveQueue({
  saved, revision, diff, send, clock,
  onEvent = () => {}, onSaved = () => {}, onConflict = async () => {},
  clientKey = newClientKey,
  sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random = Math.random,
  timers = { set: (fn, ms) => setTimeout(fn, ms), clear: (id) => clearTimeout(id) },
  debounceMs = AUTOSAVE_MS, backoffFirstMs = BACKOFF_FIRST_MS, backoffMaxMs = BACKOFF_MAX_MS, jitterMs = JITTER_MS,
}) {
  let base = Object.assign({}, saved);
  let rev = revision;
  let inflight = null;
  let again = false;
  let conflicted = false;
  let debounce = null;

  const pending = () => diff(base);
  const hasPending = () => Object.keys(pending()).length > 0;

  function cancelScheduled() {
    if (debounce !== null) { timers.clear(debounce); debounce = null; }
  }

  /* Save after the typing pauses: each call restarts the wait. */
  function schedule() {
    cancelScheduled();
    debounce = timers.set(() => { debounce = null; save(); }, debounceMs);
  }

  /* Save now. Resolves true when nothing is left pending by this round, false when it stopped short. */
  function save() {
    if (conflicted) return Promise.resolve(false);
    cancelScheduled();
    if (inflight) { again = true; return inflight; }
    inflight = (async () => {
      let ok = true;
      do { again = false; ok = await saveOnce(); } while (ok && again);
      return ok;
    })().finally(() => { inflight = null; });
    return inflight;
  }

  async function conflict(message, mine) {
    conflicted = true;
    await onConflict(message, mine);
  }

  async function saveOnce() {
    const changes = pending();
    if (!Object.keys(changes).length) { onEvent({ type: "idle", revision: rev }); return true; }
    const seconds = clock.pending();
    const body = { changes, base_revision: rev, active_seconds: seconds, client_key: clientKey() };
    let delay = backoffFirstMs;
    for (let attempt = 1; ; attempt++) {
      onEvent({ type: "saving", attempt });
      let resp = null;
      try { resp = await send(body); } catch (e) { resp = null; }
      if (resp && resp.ok) {
        const data = await resp.json();
        base = data.record || {};
        rev = data.revision;
        clock.consume(seconds);
        onSaved(data);
        if (data.replayed && data.revision !== body.base_revision + 1 && hasPending()) {
          // Ours landed (the reply was lost), then another expert saved on top of it: show, never overwrite.
          await conflict(`Your save landed, but another expert saved this question after it (now revision ${rev}).`,
            pending());
          return false;
        }
        onEvent({ type: "saved", revision: rev, replayed: !!data.replayed });
        return true;
      }
      const status = resp ? resp.status : null;
      if (status === 409) {
        const info = await resp.json().catch(() => ({}));
        await conflict(info.error || "Another expert saved this question first.", changes);
        return false;
      }
      if (status === 401 || status === 403) { onEvent({ type: "signed_out", status }); return false; }
      if (!isRetryable(status)) {
        const info = await resp.json().catch(() => ({}));
        onEvent({ type: "refused", status, info });
        return false;
      }
      // The network or the server failed: the same body (same client_key) goes again, later.
      const wait = delay + Math.floor(random() * jitterMs);
      onEvent({ type: "retrying", status, wait });
      await sleep(wait);
      delay = Math.min(delay * 2, backoffMaxMs);
    }
  }

  return {
    save, schedule, conflict, pending,
    /* A new baseline after a conflict (their record and revision); sending resumes. */
    resolve(record, revisionNow) { base = Object.assign({}, record); rev = revisionNow; conflicted = false; },
    /* Something a closing tab would lose: a save on its way, or changes not yet sent. */
    busy: () => inflight !== null || hasPending(),
    get saved() { return base; },
    get revision() { return rev; },
    get inConflict() { return conflicted; },
    get inFlight() { return inflight !== null; },
  };
}
