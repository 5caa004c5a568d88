/* Preloading the next item: every item arrives with the content of the item "next" will most likely hand
 * over after it, in a <template data-preloaded> (read by the server without a claim or a lease). The moment
 * a label is sent, that content is shown; the server's answer (the item actually claimed) then replaces it.
 * If someone else took that item meanwhile, the answer simply shows another one. */

/* The label is on its way: hide the item just labelled and show the preloaded one, if there is one. */
export function showPreloaded(section, holder) {
  const template = section && section.querySelector("template[data-preloaded]");
  if (!template || !holder) { return false; }
  holder.replaceChildren(template.content.cloneNode(true));
  section.classList.add("leaving");
  holder.hidden = false;
  return true;
}

/* The server's answer is in (or the request failed): the preview has served. */
export function clearPreloaded(section, holder) {
  if (section) { section.classList.remove("leaving"); }
  if (!holder) { return; }
  holder.hidden = true;
  holder.replaceChildren();
}

/* A page restored from the back/forward cache shows an item as it was, perhaps labelled since: reload it. */
export function restoredFromCache(event) {
  return !!(event && event.persisted);
}
