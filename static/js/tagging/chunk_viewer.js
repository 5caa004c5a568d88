/* The open chunk: fetched as a server-rendered fragment (with its neighbours) into the passage pane;
 * what it says, what is selected in it, and the tagged gold_text painted inside it. */

import { collapse } from "./record.js";

/* Whether gold_text is to be flagged: the tagged chunk is open and does not contain it (spaces and case aside). */
export function goldTextMissing(chunkText, goldText) {
  return !!goldText && !collapse(chunkText).includes(collapse(goldText));
}

/* Text nodes laid end to end as [[node, start], ...]: where `offset` into their joined text falls. */
export function locate(nodes, offset) {
  for (let i = nodes.length - 1; i >= 0; i--) if (nodes[i][1] <= offset) return [nodes[i][0], offset - nodes[i][1]];
  return [nodes[0][0], 0];
}

export function createChunkViewer({ container, chunkUrl, query, api, doc = document, win = window, onLoaded = () => {} }) {
  const view = () => container.querySelector(".chunk-view");
  const rawText = () => {
    const raw = doc.getElementById("chunk-raw");
    return raw ? raw.content.textContent : null;
  };

  async function open(chunkId) {
    if (!chunkId) return;
    const url = `${chunkUrl}?chunk_id=${encodeURIComponent(chunkId)}&q=${encodeURIComponent(query() || "")}`;
    container.setAttribute("aria-busy", "true");
    try {
      const resp = await api.getHTML(url);
      container.innerHTML = await resp.text();
    } catch (e) {
      container.innerHTML = '<p class="bad">Could not load the passage (network); press Enter to try again.</p>';
    }
    container.removeAttribute("aria-busy");
    onLoaded();
  }

  /* The neighbour links the fragment carries: the chunk before (the last such link) and after. */
  function openPrevious() { const a = Array.from(container.querySelectorAll("a.prev-chunk")).pop(); if (a) open(a.dataset.chunkId); }
  function openNext() { const a = container.querySelector("a.next-chunk"); if (a) open(a.dataset.chunkId); }

  /* The text selected inside the chunk, spaces collapsed; "" when the selection is elsewhere or empty. */
  function selection() {
    const sel = win.getSelection();
    const text = doc.getElementById("chunk-text");
    if (!sel || sel.isCollapsed || !text) return "";
    if (!text.contains(sel.anchorNode) || !text.contains(sel.focusNode)) return "";
    return sel.toString().replace(/\s+/g, " ").trim();
  }

  // Paint the tagged gold_text inside the open chunk (CSS Custom Highlight: the DOM is left alone).
  function paintGold(text) {
    if (!(win.CSS && win.CSS.highlights && win.Highlight)) return;
    win.CSS.highlights.delete("gold");
    const root = doc.getElementById("chunk-text");
    if (!text || !root) return;
    const nodes = [];
    let all = "";
    const walker = doc.createTreeWalker(root, win.NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) { nodes.push([n, all.length]); all += n.textContent; }
    const at = all.indexOf(text);
    if (at < 0) return;
    const range = doc.createRange();
    range.setStart(...locate(nodes, at));
    range.setEnd(...locate(nodes, at + text.length));
    win.CSS.highlights.set("gold", new win.Highlight(range));
  }

  /* Flag (and paint) the draft's gold_text against the open chunk when that chunk is its gold chunk. */
  function checkGold(draft, warning) {
    const v = view();
    const shown = !!(v && draft.gold_chunk_id && v.dataset.chunkId === draft.gold_chunk_id);
    warning.hidden = !(shown && goldTextMissing(rawText(), draft.gold_text));
    paintGold(shown ? draft.gold_text : null);
  }

  return { open, openPrevious, openNext, view, rawText, selection, checkGold };
}
