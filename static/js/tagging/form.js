/* The draft drawn into the gold form: the fields, the marks, and the list of passages with their buttons. */

import { isNoAnswer, passages } from "./record.js";

export function renderForm(el, draft, page, { onOpen, onRemove }) {
  const doc = el.passages.ownerDocument;
  el.goldText.value = draft.gold_text || "";
  el.expected.value = draft.expected || "";
  el.grading.value = draft.grading || "";
  if (draft.stratum && !Array.from(el.stratum.querySelectorAll("option")).some((o) => o.value === draft.stratum)) {
    const o = doc.createElement("option"); o.value = o.textContent = draft.stratum; el.stratum.appendChild(o);
  }
  el.stratum.value = draft.stratum || "";
  el.noAnswer.checked = isNoAnswer(draft, page);
  el.ambiguous.checked = draft.ambiguous === true;
  const items = passages(draft);
  el.passages.innerHTML = "";
  if (!items.length) {
    const p = doc.createElement("p");
    p.className = "muted";
    p.textContent = el.noAnswer.checked ? "Not answerable from the corpus: no gold passage." : "No gold passage yet: open a chunk and press t.";
    el.passages.appendChild(p);
    return;
  }
  const ul = doc.createElement("ul");
  ul.className = "passage-list";
  items.forEach((it) => {
    const li = doc.createElement("li");
    li.dataset.chunkId = it.id;
    const label = doc.createElement("span");
    label.className = "mono";
    label.textContent = it.id;
    li.appendChild(label);
    li.appendChild(doc.createTextNode(it.primary ? " (gold_chunk_id) " : " (gold_extra_chunk_ids) "));
    const open = doc.createElement("button"); open.type = "button"; open.textContent = "open";
    open.addEventListener("click", () => onOpen(it.id));
    const remove = doc.createElement("button"); remove.type = "button"; remove.textContent = "remove";
    remove.setAttribute("aria-label", "remove passage " + it.id);
    remove.addEventListener("click", () => onRemove(it.id, it.primary));
    li.append(open, " ", remove);
    ul.appendChild(li);
  });
  el.passages.appendChild(ul);
}
