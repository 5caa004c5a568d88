/* The conflict panel: their saved values beside the expert's unsaved ones, and the two ways out. Nothing is
 * overwritten until the expert picks one. */

/* The rows to show: every changed field but the date, as [field, theirs, mine] in JSON. */
export function conflictRows(theirs, mine) {
  return Object.keys(mine).filter((k) => k !== "labelled_at")
    .map((k) => [k, JSON.stringify(theirs[k] === undefined ? null : theirs[k]), JSON.stringify(mine[k])]);
}

/* Fetch their version and show the panel; onTheirs(record, revision) / onMine(record, revision) on a choice. */
export async function showConflict({ panel, api, url, message, mine, onTheirs, onMine }) {
  const doc = panel.ownerDocument;
  let theirs = {}, theirRevision = null;
  try {
    const resp = await api.getJSON(url);
    if (resp.ok) { const data = await resp.json(); theirs = data.record || {}; theirRevision = data.revision; }
  } catch (e) { /* shown without their values; reloading shows them */ }
  panel.hidden = false;
  panel.innerHTML = "";
  const h = doc.createElement("h3"); h.textContent = "Conflict: not saved"; panel.appendChild(h);
  const p = doc.createElement("p"); p.textContent = message; panel.appendChild(p);
  const table = doc.createElement("table");
  table.innerHTML = "<thead><tr><th>field</th><th>their value (saved)</th><th>your value (not saved)</th></tr></thead>";
  const tbody = doc.createElement("tbody");
  conflictRows(theirs, mine).forEach((row) => {
    const tr = doc.createElement("tr");
    tr.dataset.field = row[0];
    row.forEach((v, i) => {
      const td = doc.createElement("td"); td.textContent = v; if (i === 0) td.className = "mono"; tr.appendChild(td);
    });
    tbody.appendChild(tr);
  });
  table.appendChild(tbody);
  panel.appendChild(table);
  const useTheirs = doc.createElement("button");
  useTheirs.type = "button"; useTheirs.id = "conflict-theirs"; useTheirs.textContent = "Take theirs (drop my changes)";
  const keepMine = doc.createElement("button");
  keepMine.type = "button"; keepMine.id = "conflict-mine"; keepMine.textContent = "Save mine over theirs";
  useTheirs.addEventListener("click", () => onTheirs(theirs, theirRevision));
  keepMine.addEventListener("click", () => onMine(theirs, theirRevision));
  panel.append(useTheirs, " ", keepMine);
  if (theirRevision === null) { keepMine.disabled = true; }
  return useTheirs;
}

export function hideConflict(panel) { panel.hidden = true; panel.innerHTML = ""; }
