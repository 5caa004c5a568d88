/* Gold tagging, keyboard first: the entry point that wires the modules to the page. htmx (loaded by
 * base.html) does search-as-you-type.
 *
 * The question page keeps two records: what the server has (the save queue's `saved`, at its revision)
 * and `draft` (what the expert sees). The save queue sends only the fields that differ; a 409 shows the
 * other expert's values and nothing is overwritten without the expert choosing to. Unsaved changes are
 * mirrored to localStorage, so a closed tab or a crash loses nothing. Every edit made outside the text
 * boxes (and each finished stretch of typing in one) goes on the question's undo history; an undo is an
 * edit like any other, so it autosaves. The history belongs to the page: moving to another question drops it.
 */

import { createApi, csrfToken } from "./api.js";
import { createChunkViewer } from "./chunk_viewer.js";
import { startActiveClock } from "./clock.js";
import { hideConflict, showConflict } from "./conflict.js";
import { renderForm } from "./form.js";
import { taggingKey } from "./keys.js";
import { setupKeyboardList } from "./list.js";
import * as record from "./record.js";
import { createSaveQueue } from "./save_queue.js";
import { createHitList } from "./search.js";
import { statusOf } from "./status.js";
import { createUndoStack, fieldState } from "./undo.js";

const $ = (sel, root) => (root || document).querySelector(sel);

function setupTagging() {
  const root = $("#tagging");
  const stateEl = $("#tagging-state");
  if (!root || !stateEl) return;
  const page = JSON.parse(stateEl.textContent);
  const storeKey = `evalapp:tagging:${page.dataset}:${page.qid}`;
  const api = createApi({ token: () => csrfToken(document.body) });
  let draft = Object.assign({}, page.record);
  let beforeMark = null;           // stratum (and gold) before "not answerable" / "ambiguous" was set
  const history = createUndoStack();

  const el = {
    search: $("#search"), hits: $("#hits"), chunk: $("#chunk"), passages: $("#passages"),
    goldText: $("#gold_text"), expected: $("#expected"), grading: $("#grading"), stratum: $("#stratum"),
    noAnswer: $("#no-answer"), ambiguous: $("#ambiguous"), status: $("#save-status"), conflict: $("#conflict"),
    help: $("#shortcuts"), revision: $("#revision"), warning: $("#gold-text-warning"), filterDoc: $("#filter-doc"),
    undoLine: $("#undo-line"), undoText: $("#undo-text"), undoBtn: $("#undo-btn"), redoBtn: $("#redo-btn"),
  };

  function setStatus(text, cls) {
    el.status.textContent = text;
    el.status.className = cls || "muted";
  }

  const queue = createSaveQueue({
    saved: page.record,
    revision: page.revision,
    diff: (saved) => record.changes(draft, saved, page),
    send: (body) => api.patchJSON(page.api, body),
    clock: startActiveClock(window, document),
    onEvent: (event) => { const s = statusOf(event); if (s) setStatus(...s); },
    onSaved: () => { el.revision.textContent = queue.revision; remember(); },
    onConflict: (message, mine) => conflict(message, mine),
  });
  const changes = () => queue.pending();

  function remember() {
    const diff = changes();
    try {
      if (Object.keys(diff).length) localStorage.setItem(storeKey, JSON.stringify({ base_revision: queue.revision, changes: diff }));
      else localStorage.removeItem(storeKey);
    } catch (e) { /* private mode: the retrying save still protects the work */ }
  }

  const viewer = createChunkViewer({
    container: el.chunk, chunkUrl: page.chunk_url, query: () => el.search.value, api,
    onLoaded: () => viewer.checkGold(draft, el.warning),
  });
  const hits = createHitList({ hitsEl: el.hits, searchEl: el.search, filterDocEl: el.filterDoc });

  function render() {
    renderForm(el, draft, page, { onOpen: (id) => viewer.open(id), onRemove: removePassage });
    viewer.checkGold(draft, el.warning);
  }

  function changed() {
    remember();
    if (Object.keys(changes()).length && !queue.inConflict) setStatus("Unsaved changes…", "warn");
    queue.schedule();
  }

  async function conflict(message, mine) {
    const first = await showConflict({
      panel: el.conflict, api, url: page.api, message, mine,
      onTheirs: (theirs, revision) => {
        edit("theirs", () => { draft = Object.assign({}, theirs); resolve(theirs, revision); });
        setStatus(`Showing their version (revision ${revision}).`, "ok");
      },
      onMine: (theirs, revision) => { resolve(theirs, revision); remember(); queue.save(); },
    });
    setStatus("Conflict: another expert saved this question. Choose below.", "bad");
    first.focus();
  }
  function resolve(theirs, revision) {
    queue.resolve(theirs, revision);
    el.revision.textContent = revision;
    hideConflict(el.conflict);
  }

  /* ---------- the edits, and taking them back ---------- */
  /* Run an edit of the draft; what it changed goes on the undo history, is shown, and autosaves. */
  function edit(kind, fn) {
    const before = fieldState(draft);
    const marks = beforeMark;
    const result = fn();
    const step = history.record({ kind, before, after: fieldState(draft), marks: [marks, beforeMark] });
    render(); changed();
    if (step) showUndo(step.label);
    return result;
  }

  function undo() {
    const step = history.undo(draft);
    if (!step) { showUndo("Nothing to undo on this question."); return; }
    beforeMark = step.marks[0];
    render(); changed();
    showUndo(`undone: ${step.label}`);
  }

  function redo() {
    const step = history.redo(draft);
    if (!step) { showUndo("Nothing to redo."); return; }
    beforeMark = step.marks[1];
    render(); changed();
    showUndo(`redone: ${step.label}`);
  }

  /* The undo part of the status line: what was last done (or undone), and the links that take it back. */
  function showUndo(text) {
    el.undoLine.hidden = false;
    el.undoText.textContent = text;
    const top = history.top, next = history.nextRedo;
    el.undoBtn.hidden = !top;
    el.undoBtn.setAttribute("aria-label", top ? `undo: ${top.label}` : "undo");
    el.redoBtn.hidden = !next;
    el.redoBtn.setAttribute("aria-label", next ? `redo: ${next.label}` : "redo");
  }

  function tag() {
    const view = viewer.view();
    if (!view) { setStatus("Open a chunk first (search, j/k, Enter), then press t.", "warn"); return; }
    const how = edit("tag", () => record.tagChunk(draft, page, beforeMark, {
      chunkId: view.dataset.chunkId, docId: view.dataset.docId, chunkText: viewer.rawText(), narrowed: viewer.selection(),
    }));
    setStatus(how === "narrowed" ? "Tagged the selected text." : how === "kept" ? "Moved the gold here; its gold_text occurs in this chunk and is kept."
      : "Tagged the whole chunk.", "warn");
    if (draft.stratum === page.no_answer_stratum) el.stratum.focus();
  }

  function addPassage() {
    const view = viewer.view();
    if (!view) { setStatus("Open a chunk first, then press + to add it.", "warn"); return; }
    if (!draft.gold_chunk_id) { tag(); return; }
    edit("addPassage", () => record.addPassage(draft, view.dataset.chunkId));
  }

  function removePassage(id, primary) {
    edit("removePassage", () => record.removePassage(draft, id, primary));
  }

  function toggleNoAnswer(on) {
    edit(on ? "noAnswerOn" : "noAnswerOff", () => { beforeMark = record.setNoAnswer(draft, page, beforeMark, on); });
  }

  function toggleAmbiguous(on) {
    edit(on ? "ambiguousOn" : "ambiguousOff", () => { beforeMark = record.setAmbiguous(draft, page, beforeMark, on); });
  }

  /* Save, then go; in a conflict nothing is saved, so the page says why it stays and where to choose. */
  async function go(url) {
    if (queue.inConflict) { stayInConflict(); return; }
    setStatus("Saving before moving on…", "muted");
    const ok = await queue.save();
    if (ok && !Object.keys(changes()).length) window.location.assign(url);
    else if (queue.inConflict) stayInConflict();
    else setStatus("Not moving on: the save did not land. Your changes are kept.", "bad");
  }
  function stayInConflict() {
    setStatus("Not moving on: another expert saved this question since you opened it, so yours is not saved. " +
      "Choose below (take theirs, or save yours over theirs), then press n again.", "bad");
    const first = el.conflict.querySelector("button");
    if (first) first.focus();
  }
  const previousUrl = () => page.next_url + (page.next_url.includes("?") ? "&" : "?") + "step=-1";

  /* ---------- wiring ---------- */
  [["goldText", "gold_text"], ["expected", "expected"]].forEach(([name, key]) => {
    let typedFrom = null;  // the field's value when the typing began: one undo step per stretch of typing
    el[name].addEventListener("focus", () => { typedFrom = fieldState(draft)[key]; });
    el[name].addEventListener("input", () => {
      draft[key] = el[name].value === "" ? null : el[name].value;
      if (key === "gold_text") viewer.checkGold(draft, el.warning);
      changed();
    });
    el[name].addEventListener("change", () => {
      const after = fieldState(draft);
      const step = history.record({ kind: key, before: { ...after, [key]: typedFrom }, after, marks: [beforeMark, beforeMark] });
      typedFrom = after[key];
      if (step) showUndo(step.label);
    });
  });
  el.grading.addEventListener("change", () => edit("grading", () => { draft.grading = el.grading.value || null; }));
  el.stratum.addEventListener("change", () => edit("stratum", () => { draft.stratum = el.stratum.value; }));
  el.undoBtn.addEventListener("click", undo);
  el.redoBtn.addEventListener("click", redo);
  el.noAnswer.addEventListener("change", () => toggleNoAnswer(el.noAnswer.checked));
  el.ambiguous.addEventListener("change", () => toggleAmbiguous(el.ambiguous.checked));
  $("#save-btn").addEventListener("click", () => queue.save());
  $("#next-btn").addEventListener("click", () => go(page.next_url));
  $("#prev-btn").addEventListener("click", () => go(previousUrl()));

  el.hits.addEventListener("click", (ev) => {
    const a = ev.target.closest("a.open-chunk");
    if (!a) return;
    ev.preventDefault();
    const li = a.closest("li.hit");
    if (li) hits.selectItem(li);
    viewer.open(a.dataset.chunkId);
  });
  el.chunk.addEventListener("click", (ev) => {
    const a = ev.target.closest("a.open-chunk");
    if (!a) return;
    ev.preventDefault();
    viewer.open(a.dataset.chunkId);
  });
  document.body.addEventListener("htmx:afterSwap", (ev) => {
    if (ev.detail && ev.detail.target === el.hits) hits.reset();
  });

  const actions = {
    closeHelp: () => el.help.close(),
    leaveSearch: () => el.search.blur(),
    blur: (ev) => ev.target.blur(),
    focusSearch: () => { el.search.focus(); el.search.select(); },
    nextHit: () => hits.next(),
    prevHit: () => hits.prev(),
    openSelected: () => { const id = hits.selectedChunkId(); if (id) viewer.open(id); },
    tag,
    addPassage,
    focusExpected: () => el.expected.focus(),
    focusGrading: () => el.grading.focus(),
    toggleNoAnswer: () => { el.noAnswer.checked = !el.noAnswer.checked; toggleNoAnswer(el.noAnswer.checked); },
    toggleAmbiguous: () => { el.ambiguous.checked = !el.ambiguous.checked; toggleAmbiguous(el.ambiguous.checked); },
    save: () => queue.save(),
    next: () => go(page.next_url),
    previous: () => go(previousUrl()),
    prevChunk: () => viewer.openPrevious(),
    nextChunk: () => viewer.openNext(),
    filterByDocument: () => hits.filterByDocument(),
    undo,
    redo,
    help: () => el.help.showModal(),
  };
  document.addEventListener("keydown", (ev) => {
    const key = taggingKey(ev, { helpOpen: el.help.open, inSearch: ev.target === el.search });
    if (!key) return;
    if (key.prevent) ev.preventDefault();
    actions[key.action](ev);
  });

  window.addEventListener("beforeunload", (ev) => {
    if (queue.busy()) { ev.preventDefault(); ev.returnValue = ""; }
  });

  /* ---------- start: restore unsaved work, open the gold (or stale-suggested) chunk ---------- */
  let restored = null;
  try { restored = JSON.parse(localStorage.getItem(storeKey) || "null"); } catch (e) { restored = null; }
  render();
  if (restored && restored.changes) {
    if (!record.stillNeeded(restored.changes, queue.saved)) {
      localStorage.removeItem(storeKey);
    } else if (restored.base_revision === queue.revision) {
      Object.assign(draft, restored.changes);
      render();
      setStatus("Restored your unsaved changes from the last visit; saving…", "warn");
      queue.save();
    } else {
      Object.assign(draft, restored.changes);
      render();
      queue.conflict(`You had unsaved changes from revision ${restored.base_revision}; the question is now at revision ${queue.revision}.`,
        restored.changes);
    }
  }
  const first = el.chunk.dataset.openOnLoad;
  if (first) viewer.open(first);
  // A page opened with a query (a re-tag suggestion) shows its results at once. This runs after htmx has
  // processed the page (its DOMContentLoaded handler was added first); an hx-trigger filter would need eval.
  if (el.search.value && window.htmx) window.htmx.trigger(el.search, "search");
  window.evalappTagging = {
    save: () => queue.save(), changes,
    state: () => ({ revision: queue.revision, saved: queue.saved, draft, conflict: queue.inConflict, undo: history.size }),
  };
}

// Module scripts run before DOMContentLoaded, after htmx (deferred, earlier in the page) has added its own.
document.addEventListener("DOMContentLoaded", () => {
  setupKeyboardList();
  setupTagging();
});
