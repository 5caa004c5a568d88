/* htmx swaps only 2xx answers into the page. The prompt preview answers a bad template or bad parameters with
 * 400 (an unknown dataset 404) and the sentence to show, so the preview box takes those answers too; any
 * other target keeps htmx's own rule. */

export const PREVIEW_ID = "prompt-preview";

export function swapsRefusal(status, targetId) {
  return targetId === PREVIEW_ID && status >= 400 && status < 500;
}

/* Wires the rule to htmx's beforeSwap event on `root` (the document body). */
export function install(root) {
  root.addEventListener("htmx:beforeSwap", (event) => {
    const detail = event.detail || {};
    const target = detail.target;
    if (detail.xhr && swapsRefusal(detail.xhr.status, target && target.id)) {
      detail.shouldSwap = true;
      detail.isError = false;
    }
  });
}
