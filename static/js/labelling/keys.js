/* The key map of the labelling and adjudication pages: 1 correct, 2 incorrect, r comment/reason, Enter
 * submit and next, Esc leaves the text box, c the first criterion, ? help; on the labelling page also s
 * skip, f flag, p previous and g guideline (each opens its panel). A key event resolves to {action,
 * prevent} or null. Inside a criterion's radio group its own keys come first (criterionKey): digits
 * 1..9 for an ordinal scale's values in order, letters a, b, c... for a categorical one's; a key the
 * group does not use falls through to the page's map. */

export const LABEL_KEYS = {
  "1": "correct",
  "2": "incorrect",
  "r": "focusText",
  "Enter": "submit",
  "s": "skip",
  "f": "flag",
  "p": "previous",
  "g": "guideline",
  "c": "criteria",
  "?": "help",
};

const ORDINAL_KEYS = "123456789";
const CATEGORICAL_KEYS = "abcdefghijklmnopqrstuvwxyz";

/* The value index a key picks in a criterion's group of `count` values of `kind`, or null. */
export function criterionKey(ev, { kind, count }) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || typeof ev.key !== "string" || ev.key.length !== 1) return null;
  const keys = kind === "ordinal" ? ORDINAL_KEYS : CATEGORICAL_KEYS;
  const at = keys.indexOf(ev.key);
  return at >= 0 && at < count ? at : null;
}

/* A text box, where keys type rather than act (radio buttons and checkboxes do not count). */
export function isTyping(el) {
  return !!el && (el.tagName === "TEXTAREA" ||
    (el.tagName === "INPUT" && /^(text|search|email|password|number)$/.test(el.type)));
}

/* `helpOpen`: the help dialog is open; `hasForm`: an item's form is on the page; `inForm(el)`: el is
 * inside that keyboard form. "focusText" does not prevent: the page prevents it when there is a text box. */
export function labellingKey(ev, { helpOpen = false, hasForm = false, inForm = () => false } = {}) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return null;
  if (helpOpen) return ev.key === "?" ? { action: "closeHelp", prevent: true } : null;
  const target = ev.target;
  if (isTyping(target)) {
    if (ev.key === "Enter" && !ev.shiftKey && inForm(target)) return { action: "submit", prevent: true };
    if (ev.key === "Escape") return { action: "leaveText", prevent: false };
    return null;
  }
  if (!hasForm) return null;
  // Enter on a link, a button or a panel's summary is theirs (follow, press, open), never "submit".
  if (ev.key === "Enter" && target && /^(A|BUTTON|SUMMARY)$/.test(target.tagName)) return null;
  const action = Object.hasOwn(LABEL_KEYS, ev.key) ? LABEL_KEYS[ev.key] : null;
  if (!action) return null;
  return { action, prevent: action !== "focusText" };
}
