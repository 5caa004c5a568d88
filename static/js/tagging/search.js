/* The search results (htmx swaps them into #hits as you type): which one is selected, opening it, and
 * narrowing the search to its document. */

/* The index a move lands on: within [0, n - 1], or -1 when there is nothing to select. */
export function clampIndex(i, n) {
  if (n <= 0) return -1;
  return Math.max(0, Math.min(n - 1, i));
}

export function createHitList({ hitsEl, searchEl, filterDocEl, win = window }) {
  let index = -1;
  const hits = () => Array.from(hitsEl.querySelectorAll("#hit-list li.hit"));

  function select(i) {
    const list = hits();
    index = clampIndex(i, list.length);
    if (index < 0) return;
    list.forEach((li, n) => { li.classList.toggle("selected", n === index); li.setAttribute("aria-selected", n === index ? "true" : "false"); });
    list[index].scrollIntoView({ block: "nearest" });
  }

  return {
    select,
    next() { select(index + 1); },
    prev() { select(index - 1); },
    /* Select this result (an <li class="hit">). */
    selectItem(li) { select(hits().indexOf(li)); },
    /* The chunk id of the selected result (selecting the first if none is), or null with no results. */
    selectedChunkId() {
      const list = hits();
      if (!list.length) return null;
      if (index < 0) select(0);
      return list[index].dataset.chunkId;
    },
    /* New results came in: select the first. */
    reset() { index = -1; if (hits().length) select(0); },
    /* Only the selected result's document (again: every document). */
    filterByDocument() {
      const list = hits();
      const current = index >= 0 && list[index] ? list[index].dataset.docId : "";
      filterDocEl.value = filterDocEl.value ? "" : current;
      search();
    },
    search,
  };

  function search() { if (win.htmx) win.htmx.trigger(searchEl, "search"); }
}
