/* Preloading the next item: its content is fetched ahead from the preview URL (read without a claim or a
 * lease), and shown the moment the label is sent, until the server's answer (the item actually claimed)
 * replaces it. If someone else took that item meanwhile, the server's answer simply shows another one. */

/* Fetch the preview into `holder`; resolves to the previewed item's key, or null (nothing left, offline). */
export function preloadNext(section, holder, { fetchImpl = (...args) => globalThis.fetch(...args) } = {}) {
  if (!section || !holder || !section.dataset.previewUrl) { return Promise.resolve(null); }
  holder.innerHTML = "";
  return fetchImpl(section.dataset.previewUrl, { credentials: "same-origin", headers: { "Accept": "text/html" } })
    .then((response) => (response.status === 200 ? response.text() : ""))
    .then((html) => {
      holder.innerHTML = html;
      const item = holder.querySelector("[data-preview-item]");
      return item ? item.dataset.previewItem : null;
    })
    .catch(() => null);
}

/* The label is on its way: hide the item just labelled and show the preloaded one, if there is one. */
export function showPreloaded(section, holder) {
  if (!section || !holder || !holder.querySelector("[data-preview-item]")) { return false; }
  section.classList.add("leaving");
  holder.hidden = false;
  return true;
}

/* The server's answer is in (swapped in place of the section): the preview has served. */
export function clearPreloaded(holder) {
  if (!holder) { return; }
  holder.hidden = true;
  holder.innerHTML = "";
}

/* A page restored from the back/forward cache shows an item as it was, perhaps labelled since: reload it. */
export function restoredFromCache(event) {
  return !!(event && event.persisted);
}
