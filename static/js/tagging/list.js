/* Lists moved through with j/k and opened with Enter (the dataset picker, the tagging list). */

import { clampIndex } from "./search.js";
import { listKey } from "./keys.js";

export function setupKeyboardList(doc = document) {
  const rows = Array.from(doc.querySelectorAll("[data-kbd-list] .kbd-row"));
  if (!rows.length || doc.getElementById("tagging")) return;
  let index = -1;
  function select(i) {
    index = clampIndex(i, rows.length);
    rows.forEach((r, n) => r.classList.toggle("selected", n === index));
    rows[index].scrollIntoView({ block: "nearest" });
  }
  doc.addEventListener("keydown", (ev) => {
    const action = listKey(ev, { selected: index >= 0 });
    if (action === "next") { select(index + 1); ev.preventDefault(); }
    else if (action === "prev") { select(index - 1); ev.preventDefault(); }
    else if (action === "open") {
      const link = rows[index].querySelector("a.retag") || rows[index].querySelector("a");
      if (link) { ev.preventDefault(); link.click(); }
    }
  });
}
