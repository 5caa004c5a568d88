/* What the save status line says for each event of the save queue: [text, css class]. */

export const SIGNED_OUT = "Not saved: you are signed out (or lost the expert role). Sign in again in another tab, then press s; " +
  "your changes are kept in this browser.";

export function statusOf(event) {
  switch (event.type) {
    case "idle": return [`All changes saved (revision ${event.revision}).`, "ok"];
    case "saving": return [event.attempt === 1 ? "Saving…" : `Saving (attempt ${event.attempt})…`, "muted"];
    case "saved": return [`Saved (revision ${event.revision})${event.replayed ? ", once" : ""}.`, "ok"];
    case "signed_out": return [SIGNED_OUT, "bad"];
    case "refused": {
      const info = event.info || {};
      const problems = (info.problems || []).map((p) => (p.field ? p.field + ": " : "") + p.message).join("; ");
      return [`Not saved: ${info.error || info.detail || event.status}${problems ? " (" + problems + ")" : ""}`, "bad"];
    }
    case "retrying":
      return [`Not saved yet (${event.status !== null ? "server error " + event.status : "network error"}); ` +
        `retrying in ${Math.ceil(event.wait / 1000)} s. Your changes are kept.`, "warn"];
    default: return null;
  }
}
