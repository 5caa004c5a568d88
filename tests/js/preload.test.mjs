import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { clearPreloaded, restoredFromCache, showPreloaded } from "../../static/js/labelling/preload.js";

function fakeSection(preview) {
  const classes = new Set();
  const template = preview === null ? null : { content: { cloneNode: (deep) => ({ cloned: preview, deep }) } };
  return {
    classList: { add: (c) => classes.add(c), remove: (c) => classes.delete(c), has: (c) => classes.has(c) },
    querySelector: (sel) => (sel === "template[data-preloaded]" ? template : null),
  };
}

function fakeHolder() {
  return { hidden: true, children: [], replaceChildren(...nodes) { this.children = nodes; } };
}

describe("preloading the next item", () => {
  test("the label on its way: the item just labelled hides, the preloaded one shows", () => {
    const section = fakeSection("item B");
    const holder = fakeHolder();
    assert.equal(showPreloaded(section, holder), true);
    assert.deepEqual(holder.children, [{ cloned: "item B", deep: true }]);
    assert.equal(holder.hidden, false);
    assert.equal(section.classList.has("leaving"), true);
  });

  test("nothing preloaded (the last item): nothing changes", () => {
    const section = fakeSection(null);
    const holder = fakeHolder();
    assert.equal(showPreloaded(section, holder), false);
    assert.deepEqual([holder.hidden, holder.children, section.classList.has("leaving")], [true, [], false]);
    assert.equal(showPreloaded(null, holder), false);
  });

  test("the answer is in, or the request failed: the preview goes and the item shows again", () => {
    const section = fakeSection("item B");
    const holder = fakeHolder();
    showPreloaded(section, holder);
    clearPreloaded(section, holder);
    assert.deepEqual([holder.hidden, holder.children, section.classList.has("leaving")], [true, [], false]);
    clearPreloaded(null, null);
  });

  test("only a page restored from the back/forward cache is reloaded", () => {
    assert.equal(restoredFromCache({ persisted: true }), true);
    assert.equal(restoredFromCache({ persisted: false }), false);
    assert.equal(restoredFromCache(undefined), false);
  });
});
