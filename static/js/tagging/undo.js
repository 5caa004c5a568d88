/* The undo history of the question on screen: each step is the record's fields as they were before an edit
 * and after it (only the fields the edit changed), with what to call it on the status line and the page's
 * "before the mark" memory on either side. Undo puts the before-values back, redo the after-values; a new
 * edit drops what was undone. Plain objects in, plain objects out: the page saves what undo changed. */

import { FIELDS } from "./record.js";

export const UNDO_DEPTH = 50;   // steps kept per question; the oldest goes first
export const EXCERPT_CHARS = 60;

const copy = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/* The record's fields as they stand now: a deep copy, a missing field as undefined. */
export function fieldState(draft) {
  const state = {};
  FIELDS.forEach((k) => { state[k] = copy(draft[k]); });
  return state;
}

/* Set the fields of `values` on the draft (undefined: the field goes, as it was missing). */
export function applyFields(draft, values) {
  Object.keys(values).forEach((k) => {
    if (values[k] === undefined) delete draft[k];
    else draft[k] = copy(values[k]);
  });
}

/* The fields whose value differs (exactly: a restored record is the record it was, not one that means the same). */
export function changedFields(before, after) {
  return FIELDS.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}

export function excerpt(text, max = EXCERPT_CHARS) {
  const s = (text || "").replace(/\s+/g, " ").trim();
  return s.length > max ? s.slice(0, max - 1).trimEnd() + "…" : s;
}

const goldOf = (state) => (state.gold_chunk_id ? `${state.gold_chunk_id} “${excerpt(state.gold_text)}”` : "");

/* What an edit of `kind` did, said from the field states before and after it. */
export function describe(kind, before, after) {
  const was = goldOf(before);
  switch (kind) {
    case "tag":
      if (was && (before.gold_chunk_id !== after.gold_chunk_id || before.gold_text !== after.gold_text)) return `replaced gold: ${was}`;
      return `tagged gold: ${goldOf(after)}`;
    case "noAnswerOn": return was ? `not answerable: cleared gold ${was}` : "marked not answerable";
    case "noAnswerOff":
      return after.gold_chunk_id && !before.gold_chunk_id ? `answerable again: gold ${goldOf(after)} restored` : "answerable again";
    case "ambiguousOn": return "marked ambiguous";
    case "ambiguousOff": return "unmarked ambiguous";
    case "addPassage": return `added passage ${(after.gold_extra_chunk_ids || []).filter((c) => !(before.gold_extra_chunk_ids || []).includes(c)).join(", ")}`;
    case "removePassage":
      if (before.gold_chunk_id && !after.gold_chunk_id) return `removed gold ${was}`;
      return `removed passage ${(before.gold_extra_chunk_ids || []).filter((c) => !(after.gold_extra_chunk_ids || []).includes(c)).join(", ")}`;
    case "stratum": return `stratum ${before.stratum || "—"} → ${after.stratum || "—"}`;
    case "grading": return `grading ${before.grading || "—"} → ${after.grading || "—"}`;
    case "gold_text": return "edited gold_text";
    case "expected": return "edited expected";
    case "theirs": return "took their version (yours dropped)";
    default: return kind;
  }
}

export function createUndoStack({ depth = UNDO_DEPTH } = {}) {
  let done = [];
  let undone = [];
  return {
    /* Keep an edit: {kind, before, after, marks: [before, after]}. Returns the step, or null when the edit
     * changed no field (nothing to undo). */
    record({ kind, before, after, marks = [null, null] }) {
      const fields = changedFields(before, after);
      if (!fields.length) return null;
      const pick = (state) => Object.fromEntries(fields.map((k) => [k, copy(state[k])]));
      const step = { kind, label: describe(kind, before, after), before: pick(before), after: pick(after), marks };
      done.push(step);
      if (done.length > depth) done = done.slice(done.length - depth);
      undone = [];
      return step;
    },
    /* Put the last step's before-values back on the draft; the step, or null with nothing to undo. */
    undo(draft) {
      const step = done.pop();
      if (!step) return null;
      applyFields(draft, step.before);
      undone.push(step);
      return step;
    },
    /* Do the last undone step again; the step, or null. */
    redo(draft) {
      const step = undone.pop();
      if (!step) return null;
      applyFields(draft, step.after);
      done.push(step);
      return step;
    },
    get top() { return done.length ? done[done.length - 1] : null; },
    get nextRedo() { return undone.length ? undone[undone.length - 1] : null; },
    get size() { return done.length; },
  };
}
