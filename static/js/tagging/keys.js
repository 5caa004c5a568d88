/* The key maps of the tagging pages. A key event resolves to the name of an action (or to nothing), and
 * whether the browser's own handling of the key is to be prevented; the pages decide what the names do. */

/* Keys on the question page outside any text field. */
export const TAGGING_KEYS = {
  "/": "focusSearch",
  "j": "nextHit",
  "k": "prevHit",
  "Enter": "openSelected",
  "t": "tag",
  "+": "addPassage",
  "e": "focusExpected",
  "g": "focusGrading",
  "x": "toggleNoAnswer",
  "m": "toggleAmbiguous",
  "s": "save",
  "n": "next",
  "p": "previous",
  "[": "prevChunk",
  "]": "nextChunk",
  "d": "filterByDocument",
  "u": "undo",
  "?": "help",
};

/* Keys inside the search box: j and k type there, arrows move through the results. */
export const SEARCH_KEYS = {
  "ArrowDown": "nextHit",
  "ArrowUp": "prevHit",
  "Enter": "openSelected",
  "Escape": "leaveSearch",  // a search box would clear itself
};

/* Keys on a list (the dataset picker, the queue). */
export const LIST_KEYS = { "j": "next", "k": "prev", "Enter": "open" };

export function isTyping(el) {
  if (!el) return false;
  const tag = el.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || !!el.isContentEditable;
}

/* Where the browser has an undo of its own: a text box (not a checkbox, a select or a button). */
export function isTextEntry(el) {
  if (!el) return false;
  if (el.tagName === "TEXTAREA" || el.isContentEditable) return true;
  return el.tagName === "INPUT" && !["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"].includes((el.type || "text").toLowerCase());
}

const modified = (ev) => ev.ctrlKey || ev.metaKey || ev.altKey;

/* Ctrl-Z (Cmd-Z) undoes, Ctrl-Shift-Z and Ctrl-Y redo: the action name, or null for any other chord. */
function undoChord(ev) {
  if (!(ev.ctrlKey || ev.metaKey) || ev.altKey) return null;
  const k = (ev.key || "").toLowerCase();
  if (k === "z") return ev.shiftKey ? "redo" : "undo";
  if (k === "y" && !ev.shiftKey) return "redo";
  return null;
}

/* The question page: {action, prevent} or null. `helpOpen`: the shortcuts dialog is open; `inSearch`: the
 * event's target is the search box. Ctrl-Z in a text box stays the browser's own undo of the typing. */
export function taggingKey(ev, { helpOpen = false, inSearch = false } = {}) {
  const chord = undoChord(ev);
  if (chord) return helpOpen || inSearch || isTextEntry(ev.target) ? null : { action: chord, prevent: true };
  if (modified(ev)) return null;
  if (helpOpen) return ev.key === "?" || ev.key === "Escape" ? { action: "closeHelp", prevent: true } : null;
  if (inSearch) return SEARCH_KEYS[ev.key] ? { action: SEARCH_KEYS[ev.key], prevent: true } : null;
  if (isTyping(ev.target)) return ev.key === "Escape" ? { action: "blur", prevent: false } : null;
  const action = Object.hasOwn(TAGGING_KEYS, ev.key) ? TAGGING_KEYS[ev.key] : null;
  if (!action) return null;
  const tag = ev.target && ev.target.tagName;
  if (ev.key === "Enter" && (tag === "BUTTON" || tag === "A")) return null;  // let buttons and links work
  return { action, prevent: true };
}

/* A list page: the action name or null (Enter counts only once a row is selected). */
export function listKey(ev, { selected = false } = {}) {
  if (modified(ev) || isTyping(ev.target)) return null;
  const action = Object.hasOwn(LIST_KEYS, ev.key) ? LIST_KEYS[ev.key] : null;
  if (action === "open" && !selected) return null;
  return action;
}
