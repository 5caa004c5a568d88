/* The question record as the page edits it: which fields a save sends, and the edits the keys make to
 * the draft. Plain objects in, plain objects out; `page` is the page state (no_answer_stratum,
 * ambiguous_stratum, username, today, record). */

export const FIELDS = ["gold_doc_id", "gold_chunk_id", "gold_text", "gold_extra_chunk_ids", "expected", "grading", "stratum", "ambiguous"];

/* Values compare as equal when they mean the same: missing = null, ambiguous false = absent, [] = absent. */
export function norm(key, v) {
  if (v === undefined || v === "") return null;
  if (key === "ambiguous" && v === false) return null;
  if (key === "gold_extra_chunk_ids" && Array.isArray(v) && v.length === 0) return null;
  return v;
}

export function same(key, a, b) { return JSON.stringify(norm(key, a)) === JSON.stringify(norm(key, b)); }

/* The fields of `draft` that differ from `saved`, plus who labelled it and when once anything does. */
export function changes(draft, saved, page) {
  const out = {};
  FIELDS.forEach((k) => {
    if (!same(k, draft[k], saved[k])) out[k] = draft[k] === undefined ? null : draft[k];
  });
  // Not answerable: the gold fields are written as explicit nulls, as the record format asks.
  if (draft.stratum === page.no_answer_stratum && !draft.gold_chunk_id) {
    ["gold_doc_id", "gold_chunk_id", "gold_text"].forEach((k) => { if (!(k in saved)) out[k] = null; });
  }
  if (Object.keys(out).length) {
    if (saved.labelled_by !== page.username) out.labelled_by = page.username;
    if (saved.labelled_at !== page.today) out.labelled_at = page.today;
  }
  return out;
}

/* Whether unsaved changes kept from an earlier visit still change anything against `saved`. */
export function stillNeeded(kept, saved) {
  return Object.keys(kept).some((k) => FIELDS.includes(k) && !same(k, kept[k], saved[k]));
}

/* The passages to list: the gold chunk first, then the extra ones. */
export function passages(draft) {
  const items = [];
  if (draft.gold_chunk_id) items.push({ id: draft.gold_chunk_id, primary: true });
  (draft.gold_extra_chunk_ids || []).forEach((id) => items.push({ id, primary: false }));
  return items;
}

export function isNoAnswer(draft, page) {
  return draft.stratum === page.no_answer_stratum && !draft.gold_chunk_id;
}

export function collapse(s) { return (s || "").replace(/\s+/g, " ").trim().toLowerCase(); }

/* A gold passage means the question is answerable: undo "not answerable". `beforeMark` is the stratum
 * (and gold) from before "not answerable" or "ambiguous" was set. */
export function leaveMarks(draft, page, beforeMark) {
  if (draft.stratum === page.no_answer_stratum) {
    const back = beforeMark && beforeMark.stratum !== page.no_answer_stratum ? beforeMark.stratum
      : (page.record.stratum !== page.no_answer_stratum ? page.record.stratum : null);
    if (back) draft.stratum = back;
  }
}

/* Tag the open chunk as gold: the selected text, or (moving stale gold) the kept gold_text when it occurs in
 * the chunk, or the whole chunk. Returns how: "narrowed", "kept" or "whole". */
export function tagChunk(draft, page, beforeMark, { chunkId, docId, chunkText, narrowed }) {
  const whole = (chunkText || "").trim();
  // Re-tagging stale gold: the chunk changed id but still holds the narrowed text; keep that text.
  const keep = !narrowed && draft.gold_text && chunkId !== draft.gold_chunk_id &&
    collapse(whole).includes(collapse(draft.gold_text));
  draft.gold_chunk_id = chunkId;
  draft.gold_doc_id = docId;
  draft.gold_text = narrowed || (keep ? draft.gold_text : whole);
  if (Array.isArray(draft.gold_extra_chunk_ids)) draft.gold_extra_chunk_ids = draft.gold_extra_chunk_ids.filter((c) => c !== draft.gold_chunk_id);
  leaveMarks(draft, page, beforeMark);
  return narrowed ? "narrowed" : keep ? "kept" : "whole";
}

/* Add a chunk as another gold passage; false when there was nothing to add. */
export function addPassage(draft, chunkId) {
  if (chunkId === draft.gold_chunk_id) return false;
  const extra = Array.isArray(draft.gold_extra_chunk_ids) ? draft.gold_extra_chunk_ids.slice() : [];
  if (!extra.includes(chunkId)) extra.push(chunkId);
  draft.gold_extra_chunk_ids = extra;
  return true;
}

export function removePassage(draft, chunkId, primary) {
  if (primary) { draft.gold_chunk_id = null; draft.gold_doc_id = null; draft.gold_text = null; }
  else draft.gold_extra_chunk_ids = (draft.gold_extra_chunk_ids || []).filter((c) => c !== chunkId);
}

export const GOLD_KEYS = ["gold_doc_id", "gold_chunk_id", "gold_text", "gold_extra_chunk_ids"];

/* Marking "not answerable" clears the gold and keeps it in the mark (`gold`); unmarking it puts that gold
 * back exactly when no gold was tagged meanwhile. Returns the new beforeMark. */
export function setNoAnswer(draft, page, beforeMark, on) {
  if (on) {
    const gold = Object.fromEntries(GOLD_KEYS.map((k) => [k, draft[k] === undefined ? undefined : JSON.parse(JSON.stringify(draft[k]))]));
    const mark = { stratum: draft.stratum, gold };
    draft.stratum = page.no_answer_stratum;
    draft.gold_doc_id = null; draft.gold_chunk_id = null; draft.gold_text = null;
    if (draft.gold_extra_chunk_ids !== undefined) draft.gold_extra_chunk_ids = [];
    return mark;
  }
  leaveMarks(draft, page, beforeMark);
  const gold = beforeMark && beforeMark.gold;
  if (gold && !draft.gold_chunk_id && !(draft.gold_extra_chunk_ids || []).length) {
    GOLD_KEYS.forEach((k) => { if (gold[k] === undefined) delete draft[k]; else draft[k] = gold[k]; });
  }
  return beforeMark ? { stratum: beforeMark.stratum, gold: null } : beforeMark;
}

/* Returns the new beforeMark. */
export function setAmbiguous(draft, page, beforeMark, on) {
  draft.ambiguous = on;
  if (page.ambiguous_stratum) {
    // The gold a "not answerable" mark holds is carried over, so unmarking that later still brings it back.
    if (on) { const mark = { stratum: draft.stratum, gold: (beforeMark && beforeMark.gold) || null }; draft.stratum = page.ambiguous_stratum; return mark; }
    if (beforeMark && draft.stratum === page.ambiguous_stratum) draft.stratum = beforeMark.stratum;
  }
  return beforeMark;
}
