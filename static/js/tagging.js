/* Gold tagging, keyboard first. Vanilla JS; htmx (loaded by base.html) does search-as-you-type.
 *
 * The question page keeps two records: `saved` (what the server has, at `revision`) and `draft`
 * (what the expert sees). A save sends only the fields that differ, against `revision`, with one
 * client_key per save that every retry reuses, so a save lands exactly once however often the network
 * fails. A 409 shows the other expert's values; nothing is overwritten without the expert choosing to.
 * Unsaved changes are mirrored to localStorage, so a closed tab or a crash loses nothing.
 */
(function () {
  "use strict";

  const IDLE_MS = 30000;            // no input for this long: the expert is away, the clock stops
  const AUTOSAVE_MS = 800;          // debounce for typing
  const BACKOFF_FIRST_MS = 500;
  const BACKOFF_MAX_MS = 30000;
  const FIELDS = ["gold_doc_id", "gold_chunk_id", "gold_text", "gold_extra_chunk_ids", "expected", "grading", "stratum", "ambiguous"];

  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  function isTyping(el) {
    if (!el) return false;
    const tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }

  function uuid() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return "k" + Date.now().toString(36) + Math.random().toString(36).slice(2);
  }

  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch (e) {
      return "";
    }
  }

  /* ---------- lists moved through with j/k (queue, dataset picker) ---------- */
  function setupKeyboardList() {
    const rows = $$("[data-kbd-list] .kbd-row");
    if (!rows.length || $("#tagging")) return;
    let index = -1;
    function select(i) {
      if (!rows.length) return;
      index = Math.max(0, Math.min(rows.length - 1, i));
      rows.forEach((r, n) => r.classList.toggle("selected", n === index));
      rows[index].scrollIntoView({ block: "nearest" });
    }
    document.addEventListener("keydown", (ev) => {
      if (ev.ctrlKey || ev.metaKey || ev.altKey || isTyping(ev.target)) return;
      if (ev.key === "j") { select(index + 1); ev.preventDefault(); }
      else if (ev.key === "k") { select(index - 1); ev.preventDefault(); }
      else if (ev.key === "Enter" && index >= 0) {
        const link = rows[index].querySelector("a.retag") || rows[index].querySelector("a");
        if (link) { ev.preventDefault(); link.click(); }
      }
    });
  }

  /* ---------- active time: visible tab and input in the last 30 s ---------- */
  function ActiveClock() {
    let seconds = 0;
    let lastInput = Date.now();
    let lastTick = Date.now();
    const touch = () => { lastInput = Date.now(); };
    ["keydown", "mousedown", "mousemove", "wheel", "touchstart", "input", "scroll"].forEach((t) =>
      window.addEventListener(t, touch, { passive: true, capture: true }));
    setInterval(() => {
      const now = Date.now();
      const step = Math.min(now - lastTick, 2000) / 1000;  // a suspended laptop does not count
      lastTick = now;
      if (document.visibilityState === "visible" && now - lastInput < IDLE_MS) seconds += step;
    }, 1000);
    document.addEventListener("visibilitychange", () => { lastTick = Date.now(); });
    return {
      pending: () => Math.round(seconds * 10) / 10,
      consume: (s) => { seconds = Math.max(0, seconds - s); },
    };
  }

  /* ---------- the question page ---------- */
  function setupTagging() {
    const root = $("#tagging");
    const stateEl = $("#tagging-state");
    if (!root || !stateEl) return;
    const page = JSON.parse(stateEl.textContent);
    const storeKey = `evalapp:tagging:${page.dataset}:${page.qid}`;
    const clock = ActiveClock();
    let saved = Object.assign({}, page.record);
    let revision = page.revision;
    let draft = Object.assign({}, page.record);
    let beforeMark = null;           // stratum (and gold) before "not answerable" / "ambiguous" was set
    let inflight = null;
    let again = false;
    let conflict = false;
    let debounce = null;
    let hitIndex = -1;

    const el = {
      search: $("#search"), hits: $("#hits"), chunk: $("#chunk"), passages: $("#passages"),
      goldText: $("#gold_text"), expected: $("#expected"), grading: $("#grading"), stratum: $("#stratum"),
      noAnswer: $("#no-answer"), ambiguous: $("#ambiguous"), status: $("#save-status"), conflict: $("#conflict"),
      help: $("#shortcuts"), revision: $("#revision"), warning: $("#gold-text-warning"),
    };

    /* values compare as equal when they mean the same: missing = null, ambiguous false = absent, [] = absent */
    function norm(key, v) {
      if (v === undefined || v === "") return null;
      if (key === "ambiguous" && v === false) return null;
      if (key === "gold_extra_chunk_ids" && Array.isArray(v) && v.length === 0) return null;
      return v;
    }
    function same(key, a, b) { return JSON.stringify(norm(key, a)) === JSON.stringify(norm(key, b)); }

    function changes() {
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

    function setStatus(text, cls) {
      el.status.textContent = text;
      el.status.className = cls || "muted";
    }

    function remember() {
      const diff = changes();
      try {
        if (Object.keys(diff).length) localStorage.setItem(storeKey, JSON.stringify({ base_revision: revision, changes: diff }));
        else localStorage.removeItem(storeKey);
      } catch (e) { /* private mode: the retrying save still protects the work */ }
    }

    /* ---------- rendering the draft into the form ---------- */
    function render() {
      el.goldText.value = draft.gold_text || "";
      el.expected.value = draft.expected || "";
      el.grading.value = draft.grading || "";
      if (draft.stratum && !$$("option", el.stratum).some((o) => o.value === draft.stratum)) {
        const o = document.createElement("option"); o.value = o.textContent = draft.stratum; el.stratum.appendChild(o);
      }
      el.stratum.value = draft.stratum || "";
      el.noAnswer.checked = draft.stratum === page.no_answer_stratum && !draft.gold_chunk_id;
      el.ambiguous.checked = draft.ambiguous === true;
      const items = [];
      if (draft.gold_chunk_id) items.push({ id: draft.gold_chunk_id, primary: true });
      (draft.gold_extra_chunk_ids || []).forEach((id) => items.push({ id, primary: false }));
      el.passages.innerHTML = "";
      if (!items.length) {
        const p = document.createElement("p");
        p.className = "muted";
        p.textContent = el.noAnswer.checked ? "Not answerable from the corpus: no gold passage." : "No gold passage yet: open a chunk and press t.";
        el.passages.appendChild(p);
      } else {
        const ul = document.createElement("ul");
        ul.className = "passage-list";
        items.forEach((it) => {
          const li = document.createElement("li");
          li.dataset.chunkId = it.id;
          const label = document.createElement("span");
          label.className = "mono";
          label.textContent = it.id;
          li.appendChild(label);
          li.appendChild(document.createTextNode(it.primary ? " (gold_chunk_id) " : " (gold_extra_chunk_ids) "));
          const open = document.createElement("button"); open.type = "button"; open.textContent = "open";
          open.addEventListener("click", () => openChunk(it.id));
          const remove = document.createElement("button"); remove.type = "button"; remove.textContent = "remove";
          remove.setAttribute("aria-label", "remove passage " + it.id);
          remove.addEventListener("click", () => removePassage(it.id, it.primary));
          li.append(open, " ", remove);
          ul.appendChild(li);
        });
        el.passages.appendChild(ul);
      }
      checkGoldText();
    }

    function openChunkText() {
      const raw = $("#chunk-raw");
      return raw ? raw.content.textContent : null;
    }
    function collapse(s) { return (s || "").replace(/\s+/g, " ").trim().toLowerCase(); }
    function checkGoldText() {
      const view = $(".chunk-view", el.chunk);
      const shown = view && draft.gold_chunk_id && view.dataset.chunkId === draft.gold_chunk_id;
      el.warning.hidden = !(shown && draft.gold_text && !collapse(openChunkText()).includes(collapse(draft.gold_text)));
      showGoldInChunk(shown ? draft.gold_text : null);
    }

    // Paint the tagged gold_text inside the open chunk (CSS Custom Highlight: the DOM is left alone).
    function showGoldInChunk(text) {
      if (!(window.CSS && CSS.highlights && window.Highlight)) return;
      CSS.highlights.delete("gold");
      const root = $("#chunk-text");
      if (!text || !root) return;
      const nodes = [];
      let all = "";
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) { nodes.push([n, all.length]); all += n.textContent; }
      const at = all.indexOf(text);
      if (at < 0) return;
      const locate = (offset) => {
        for (let i = nodes.length - 1; i >= 0; i--) if (nodes[i][1] <= offset) return [nodes[i][0], offset - nodes[i][1]];
        return [nodes[0][0], 0];
      };
      const range = document.createRange();
      range.setStart(...locate(at));
      range.setEnd(...locate(at + text.length));
      CSS.highlights.set("gold", new Highlight(range));
    }

    function changed() {
      remember();
      const n = Object.keys(changes()).length;
      if (n && !conflict) setStatus("Unsaved changes…", "warn");
      clearTimeout(debounce);
      debounce = setTimeout(() => { save(); }, AUTOSAVE_MS);
    }

    /* ---------- saving: one key per save, reused by every retry; backoff; 409 shown ---------- */
    function save() {
      if (conflict) return Promise.resolve(false);
      clearTimeout(debounce);
      if (inflight) { again = true; return inflight; }
      inflight = (async () => {
        let ok = true;
        do { again = false; ok = await saveOnce(); } while (ok && again);
        return ok;
      })().finally(() => { inflight = null; });
      return inflight;
    }

    async function saveOnce() {
      const diff = changes();
      if (!Object.keys(diff).length) { setStatus(`All changes saved (revision ${revision}).`, "ok"); return true; }
      const seconds = clock.pending();
      const body = { changes: diff, base_revision: revision, active_seconds: seconds, client_key: uuid() };
      let delay = BACKOFF_FIRST_MS;
      for (let attempt = 1; ; attempt++) {
        setStatus(attempt === 1 ? "Saving…" : `Saving (attempt ${attempt})…`, "muted");
        let resp = null;
        try {
          resp = await fetch(page.api, {
            method: "PATCH", credentials: "same-origin",
            headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(), "Accept": "application/json" },
            body: JSON.stringify(body),
          });
        } catch (e) { resp = null; }
        if (resp && resp.ok) {
          const data = await resp.json();
          saved = data.record || {};
          revision = data.revision;
          el.revision.textContent = revision;
          clock.consume(seconds);
          if (data.replayed && data.revision !== body.base_revision + 1 && Object.keys(changes()).length) {
            // Ours landed (the reply was lost), then another expert saved on top of it: show, never overwrite.
            remember();
            await showConflict(`Your save landed, but another expert saved this question after it (now revision ${revision}).`,
              changes());
            return false;
          }
          remember();
          setStatus(`Saved (revision ${revision})${data.replayed ? ", once" : ""}.`, "ok");
          return true;
        }
        if (resp && resp.status === 409) {
          const info = await resp.json().catch(() => ({}));
          await showConflict(info.error || "Another expert saved this question first.", diff);
          return false;
        }
        if (resp && (resp.status === 401 || resp.status === 403)) {
          setStatus("Not saved: you are signed out (or lost the expert role). Sign in again in another tab, then press s; " +
            "your changes are kept in this browser.", "bad");
          return false;
        }
        if (resp && resp.status >= 400 && resp.status < 500 && resp.status !== 408 && resp.status !== 429) {
          const info = await resp.json().catch(() => ({}));
          const problems = (info.problems || []).map((p) => (p.field ? p.field + ": " : "") + p.message).join("; ");
          setStatus(`Not saved: ${info.error || info.detail || resp.status}${problems ? " (" + problems + ")" : ""}`, "bad");
          return false;
        }
        // The network or the server failed: the same body (same client_key) goes again, later.
        const wait = delay + Math.floor(Math.random() * 200);
        setStatus(`Not saved yet (${resp ? "server error " + resp.status : "network error"}); retrying in ${Math.ceil(wait / 1000)} s. Your changes are kept.`, "warn");
        await new Promise((r) => setTimeout(r, wait));
        delay = Math.min(delay * 2, BACKOFF_MAX_MS);
      }
    }

    async function showConflict(message, mine) {
      conflict = true;
      let theirs = {}, theirRevision = null;
      try {
        const resp = await fetch(page.api, { credentials: "same-origin", headers: { Accept: "application/json" } });
        if (resp.ok) { const data = await resp.json(); theirs = data.record || {}; theirRevision = data.revision; }
      } catch (e) { /* shown without their values; reloading shows them */ }
      el.conflict.hidden = false;
      el.conflict.innerHTML = "";
      const h = document.createElement("h3"); h.textContent = "Conflict: not saved"; el.conflict.appendChild(h);
      const p = document.createElement("p"); p.textContent = message; el.conflict.appendChild(p);
      const table = document.createElement("table");
      table.innerHTML = "<thead><tr><th>field</th><th>their value (saved)</th><th>your value (not saved)</th></tr></thead>";
      const tbody = document.createElement("tbody");
      Object.keys(mine).filter((k) => k !== "labelled_at").forEach((k) => {
        const tr = document.createElement("tr");
        tr.dataset.field = k;
        [k, JSON.stringify(theirs[k] === undefined ? null : theirs[k]), JSON.stringify(mine[k])].forEach((v, i) => {
          const td = document.createElement("td"); td.textContent = v; if (i === 0) td.className = "mono"; tr.appendChild(td);
        });
        tbody.appendChild(tr);
      });
      table.appendChild(tbody);
      el.conflict.appendChild(table);
      const useTheirs = document.createElement("button");
      useTheirs.type = "button"; useTheirs.id = "conflict-theirs"; useTheirs.textContent = "Take theirs (drop my changes)";
      const keepMine = document.createElement("button");
      keepMine.type = "button"; keepMine.id = "conflict-mine"; keepMine.textContent = "Save mine over theirs";
      useTheirs.addEventListener("click", () => {
        saved = theirs; draft = Object.assign({}, theirs); revision = theirRevision; el.revision.textContent = revision;
        resolveConflict(); render(); remember(); setStatus(`Showing their version (revision ${revision}).`, "ok");
      });
      keepMine.addEventListener("click", () => {
        saved = theirs; revision = theirRevision; el.revision.textContent = revision;
        resolveConflict(); remember(); save();
      });
      el.conflict.append(useTheirs, " ", keepMine);
      if (theirRevision === null) { keepMine.disabled = true; }
      setStatus("Conflict: another expert saved this question. Choose below.", "bad");
      useTheirs.focus();
    }
    function resolveConflict() { conflict = false; el.conflict.hidden = true; el.conflict.innerHTML = ""; }

    /* ---------- search results and the open chunk ---------- */
    function hits() { return $$("#hit-list li.hit"); }
    function selectHit(i) {
      const list = hits();
      if (!list.length) { hitIndex = -1; return; }
      hitIndex = Math.max(0, Math.min(list.length - 1, i));
      list.forEach((li, n) => { li.classList.toggle("selected", n === hitIndex); li.setAttribute("aria-selected", n === hitIndex ? "true" : "false"); });
      list[hitIndex].scrollIntoView({ block: "nearest" });
    }
    async function openChunk(chunkId) {
      if (!chunkId) return;
      const url = `${page.chunk_url}?chunk_id=${encodeURIComponent(chunkId)}&q=${encodeURIComponent(el.search.value || "")}`;
      el.chunk.setAttribute("aria-busy", "true");
      try {
        const resp = await fetch(url, { credentials: "same-origin", headers: { "HX-Request": "true" } });
        el.chunk.innerHTML = await resp.text();
      } catch (e) {
        el.chunk.innerHTML = '<p class="bad">Could not load the passage (network); press Enter to try again.</p>';
      }
      el.chunk.removeAttribute("aria-busy");
      checkGoldText();
    }
    function openSelected() {
      const list = hits();
      if (!list.length) return;
      if (hitIndex < 0) selectHit(0);
      openChunk(list[hitIndex].dataset.chunkId);
    }
    function openView() { return $(".chunk-view", el.chunk); }

    function filterByDocument() {
      // Only the selected result's document (again: every document).
      const doc = $("#filter-doc");
      const list = hits();
      const current = hitIndex >= 0 && list[hitIndex] ? list[hitIndex].dataset.docId : "";
      doc.value = doc.value ? "" : current;
      if (window.htmx) window.htmx.trigger(el.search, "search");
    }

    function selectionInChunk() {
      const sel = window.getSelection();
      const text = $("#chunk-text");
      if (!sel || sel.isCollapsed || !text) return "";
      if (!text.contains(sel.anchorNode) || !text.contains(sel.focusNode)) return "";
      return sel.toString().replace(/\s+/g, " ").trim();
    }

    function leaveMarks() {
      // A gold passage means the question is answerable: undo "not answerable".
      if (draft.stratum === page.no_answer_stratum) {
        const back = beforeMark && beforeMark.stratum !== page.no_answer_stratum ? beforeMark.stratum
          : (page.record.stratum !== page.no_answer_stratum ? page.record.stratum : null);
        if (back) draft.stratum = back;
      }
    }

    function tag() {
      const view = openView();
      if (!view) { setStatus("Open a chunk first (search, j/k, Enter), then press t.", "warn"); return; }
      const narrowed = selectionInChunk();
      const whole = (openChunkText() || "").trim();
      // Re-tagging stale gold: the chunk changed id but still holds the narrowed text; keep that text.
      const keep = !narrowed && draft.gold_text && view.dataset.chunkId !== draft.gold_chunk_id &&
        collapse(whole).includes(collapse(draft.gold_text));
      draft.gold_chunk_id = view.dataset.chunkId;
      draft.gold_doc_id = view.dataset.docId;
      draft.gold_text = narrowed || (keep ? draft.gold_text : whole);
      if (Array.isArray(draft.gold_extra_chunk_ids)) draft.gold_extra_chunk_ids = draft.gold_extra_chunk_ids.filter((c) => c !== draft.gold_chunk_id);
      leaveMarks();
      render(); changed();
      setStatus(narrowed ? "Tagged the selected text." : keep ? "Moved the gold here; its gold_text occurs in this chunk and is kept."
        : "Tagged the whole chunk.", "warn");
      if (draft.stratum === page.no_answer_stratum) el.stratum.focus();
    }

    function addPassage() {
      const view = openView();
      if (!view) { setStatus("Open a chunk first, then press + to add it.", "warn"); return; }
      if (!draft.gold_chunk_id) { tag(); return; }
      const id = view.dataset.chunkId;
      if (id === draft.gold_chunk_id) return;
      const extra = Array.isArray(draft.gold_extra_chunk_ids) ? draft.gold_extra_chunk_ids.slice() : [];
      if (!extra.includes(id)) extra.push(id);
      draft.gold_extra_chunk_ids = extra;
      render(); changed();
    }

    function removePassage(id, primary) {
      if (primary) { draft.gold_chunk_id = null; draft.gold_doc_id = null; draft.gold_text = null; }
      else draft.gold_extra_chunk_ids = (draft.gold_extra_chunk_ids || []).filter((c) => c !== id);
      render(); changed();
    }

    function toggleNoAnswer(on) {
      if (on) {
        beforeMark = { stratum: draft.stratum };
        draft.stratum = page.no_answer_stratum;
        draft.gold_doc_id = null; draft.gold_chunk_id = null; draft.gold_text = null;
        if (draft.gold_extra_chunk_ids !== undefined) draft.gold_extra_chunk_ids = [];
      } else {
        leaveMarks();
      }
      render(); changed();
    }

    function toggleAmbiguous(on) {
      draft.ambiguous = on;
      if (page.ambiguous_stratum) {
        if (on) { beforeMark = { stratum: draft.stratum }; draft.stratum = page.ambiguous_stratum; }
        else if (beforeMark && draft.stratum === page.ambiguous_stratum) draft.stratum = beforeMark.stratum;
      }
      render(); changed();
    }

    async function go(url) {
      setStatus("Saving before moving on…", "muted");
      const ok = await save();
      if (ok && !Object.keys(changes()).length) window.location.assign(url);
      else if (!conflict) setStatus("Not moving on: the save did not land. Your changes are kept.", "bad");
    }

    /* ---------- wiring ---------- */
    [["goldText", "gold_text"], ["expected", "expected"]].forEach(([name, key]) => {
      el[name].addEventListener("input", () => { draft[key] = el[name].value === "" ? null : el[name].value; if (key === "gold_text") checkGoldText(); changed(); });
    });
    el.grading.addEventListener("change", () => { draft.grading = el.grading.value || null; changed(); });
    el.stratum.addEventListener("change", () => { draft.stratum = el.stratum.value; render(); changed(); });
    el.noAnswer.addEventListener("change", () => toggleNoAnswer(el.noAnswer.checked));
    el.ambiguous.addEventListener("change", () => toggleAmbiguous(el.ambiguous.checked));
    $("#save-btn").addEventListener("click", () => save());
    $("#next-btn").addEventListener("click", () => go(page.next_url));
    $("#prev-btn").addEventListener("click", () => go(page.next_url + (page.next_url.includes("?") ? "&" : "?") + "step=-1"));

    el.hits.addEventListener("click", (ev) => {
      const a = ev.target.closest("a.open-chunk");
      if (!a) return;
      ev.preventDefault();
      const list = hits();
      const li = a.closest("li.hit");
      if (li) selectHit(list.indexOf(li));
      openChunk(a.dataset.chunkId);
    });
    el.chunk.addEventListener("click", (ev) => {
      const a = ev.target.closest("a.open-chunk");
      if (!a) return;
      ev.preventDefault();
      openChunk(a.dataset.chunkId);
    });
    document.body.addEventListener("htmx:afterSwap", (ev) => {
      if (ev.detail && ev.detail.target === el.hits) { hitIndex = -1; if (hits().length) selectHit(0); }
    });

    document.addEventListener("keydown", (ev) => {
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      if (el.help.open) { if (ev.key === "?" || ev.key === "Escape") { el.help.close(); ev.preventDefault(); } return; }
      const target = ev.target;
      if (target === el.search) {
        if (ev.key === "ArrowDown") { selectHit(hitIndex + 1); ev.preventDefault(); }
        else if (ev.key === "ArrowUp") { selectHit(hitIndex - 1); ev.preventDefault(); }
        else if (ev.key === "Enter") { ev.preventDefault(); openSelected(); }
        else if (ev.key === "Escape") { ev.preventDefault(); el.search.blur(); }  // a search box would clear itself
        return;
      }
      if (isTyping(target)) { if (ev.key === "Escape") target.blur(); return; }
      const actions = {
        "/": () => { el.search.focus(); el.search.select(); },
        "j": () => selectHit(hitIndex + 1),
        "k": () => selectHit(hitIndex - 1),
        "Enter": () => openSelected(),
        "t": () => tag(),
        "+": () => addPassage(),
        "e": () => el.expected.focus(),
        "g": () => el.grading.focus(),
        "x": () => { el.noAnswer.checked = !el.noAnswer.checked; toggleNoAnswer(el.noAnswer.checked); },
        "m": () => { el.ambiguous.checked = !el.ambiguous.checked; toggleAmbiguous(el.ambiguous.checked); },
        "s": () => save(),
        "n": () => go(page.next_url),
        "p": () => go(page.next_url + (page.next_url.includes("?") ? "&" : "?") + "step=-1"),
        "[": () => { const a = $$("a.prev-chunk", el.chunk).pop(); if (a) openChunk(a.dataset.chunkId); },
        "]": () => { const a = $("a.next-chunk", el.chunk); if (a) openChunk(a.dataset.chunkId); },
        "d": () => filterByDocument(),
        "?": () => el.help.showModal(),
      };
      const act = actions[ev.key];
      if (!act) return;
      if (ev.key === "Enter" && (target.tagName === "BUTTON" || target.tagName === "A")) return;  // let buttons and links work
      ev.preventDefault();
      act();
    });

    window.addEventListener("beforeunload", (ev) => {
      if (inflight || Object.keys(changes()).length) { ev.preventDefault(); ev.returnValue = ""; }
    });

    /* ---------- start: restore unsaved work, open the gold (or stale-suggested) chunk ---------- */
    let restored = null;
    try { restored = JSON.parse(localStorage.getItem(storeKey) || "null"); } catch (e) { restored = null; }
    render();
    if (restored && restored.changes) {
      const stillNeeded = Object.keys(restored.changes).some((k) => FIELDS.includes(k) && !same(k, restored.changes[k], saved[k]));
      if (!stillNeeded) {
        localStorage.removeItem(storeKey);
      } else if (restored.base_revision === revision) {
        Object.assign(draft, restored.changes);
        render();
        setStatus("Restored your unsaved changes from the last visit; saving…", "warn");
        save();
      } else {
        Object.assign(draft, restored.changes);
        render();
        showConflict(`You had unsaved changes from revision ${restored.base_revision}; the question is now at revision ${revision}.`,
          restored.changes);
      }
    }
    const first = el.chunk.dataset.openOnLoad;
    if (first) openChunk(first);
    // A page opened with a query (a re-tag suggestion) shows its results at once. This runs after htmx has
    // processed the page (its DOMContentLoaded handler was added first); an hx-trigger filter would need eval.
    if (el.search.value && window.htmx) window.htmx.trigger(el.search, "search");
    window.evalappTagging = { save, changes: () => changes(), state: () => ({ revision, saved, draft, conflict }) };
  }

  document.addEventListener("DOMContentLoaded", () => {
    setupKeyboardList();
    setupTagging();
    // `?` on any tagging page explains where the keys are.
  });
})();
