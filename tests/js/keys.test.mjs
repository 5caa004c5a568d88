import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { isTextEntry, isTyping, listKey, taggingKey, TAGGING_KEYS } from "../../static/js/tagging/keys.js";
import { criterionKey, isTyping as isTypingLabel, labellingKey } from "../../static/js/labelling/keys.js";

const body = { tagName: "BODY" };
const key = (k, extra = {}) => ({ key: k, target: body, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...extra });

describe("the question page", () => {
  test("every mapped key outside a field acts and is prevented", () => {
    for (const [k, action] of Object.entries(TAGGING_KEYS)) assert.deepEqual(taggingKey(key(k)), { action, prevent: true }, k);
    assert.deepEqual(Object.values(TAGGING_KEYS), ["focusSearch", "nextHit", "prevHit", "openSelected", "tag", "addPassage",
      "focusExpected", "focusGrading", "toggleNoAnswer", "toggleAmbiguous", "save", "next", "previous", "prevChunk", "nextChunk",
      "filterByDocument", "undo", "help"]);
  });

  test("Ctrl-Z and Cmd-Z undo; Ctrl-Shift-Z, Cmd-Shift-Z and Ctrl-Y redo; outside text boxes only", () => {
    const undo = { action: "undo", prevent: true }, redo = { action: "redo", prevent: true };
    assert.deepEqual([key("z", { ctrlKey: true }), key("z", { metaKey: true }), key("Z", { ctrlKey: true, shiftKey: true }),
      key("z", { metaKey: true, shiftKey: true }), key("y", { ctrlKey: true })].map((ev) => taggingKey(ev)), [undo, undo, redo, redo, redo]);
    assert.deepEqual(taggingKey(key("u")), undo);
    // On a checkbox, a select or a button the browser has no undo of its own: the page's acts.
    for (const target of [{ tagName: "INPUT", type: "checkbox" }, { tagName: "SELECT" }, { tagName: "BUTTON" }]) {
      assert.deepEqual(taggingKey(key("z", { ctrlKey: true, target })), undo, target.tagName);
    }
  });

  test("in a text box, the search box or the help, Ctrl-Z stays the browser's and u types", () => {
    for (const target of [{ tagName: "TEXTAREA" }, { tagName: "INPUT", type: "text" }, { tagName: "INPUT" }, { tagName: "DIV", isContentEditable: true }]) {
      assert.equal(taggingKey(key("z", { ctrlKey: true, target })), null);
      assert.equal(taggingKey(key("u", { target })), null);
    }
    assert.equal(taggingKey(key("z", { ctrlKey: true, target: { tagName: "INPUT", type: "search" } }), { inSearch: true }), null);
    assert.equal(taggingKey(key("z", { ctrlKey: true }), { helpOpen: true }), null);
    assert.equal(taggingKey(key("u"), { helpOpen: true }), null);
    assert.equal(taggingKey(key("z", { ctrlKey: true, altKey: true })), null);
    assert.equal(taggingKey(key("y", { ctrlKey: true, shiftKey: true })), null);
    assert.deepEqual([isTextEntry({ tagName: "INPUT", type: "radio" }), isTextEntry({ tagName: "INPUT", type: "number" }), isTextEntry(null)],
      [false, true, false]);
  });

  test("unmapped keys and modified keys do nothing", () => {
    assert.equal(taggingKey(key("q")), null);
    assert.equal(taggingKey(key("constructor")), null);
    for (const mod of ["ctrlKey", "metaKey", "altKey"]) assert.equal(taggingKey(key("s", { [mod]: true })), null);
  });

  test("with the help open only ? and Escape act: they close it", () => {
    assert.deepEqual(taggingKey(key("?"), { helpOpen: true }), { action: "closeHelp", prevent: true });
    assert.deepEqual(taggingKey(key("Escape"), { helpOpen: true }), { action: "closeHelp", prevent: true });
    assert.equal(taggingKey(key("s"), { helpOpen: true }), null);
  });

  test("in the search box letters type; arrows, Enter and Escape act", () => {
    const search = { tagName: "INPUT" };
    assert.equal(taggingKey(key("j", { target: search }), { inSearch: true }), null);
    assert.deepEqual(["ArrowDown", "ArrowUp", "Enter", "Escape"].map((k) => taggingKey(key(k, { target: search }), { inSearch: true })),
      [{ action: "nextHit", prevent: true }, { action: "prevHit", prevent: true }, { action: "openSelected", prevent: true },
        { action: "leaveSearch", prevent: true }]);
  });

  test("in another field only Escape acts, leaving it without preventing the key", () => {
    for (const tagName of ["INPUT", "TEXTAREA", "SELECT"]) {
      assert.equal(taggingKey(key("s", { target: { tagName } })), null);
      assert.deepEqual(taggingKey(key("Escape", { target: { tagName } })), { action: "blur", prevent: false });
    }
    assert.equal(isTyping({ tagName: "DIV", isContentEditable: true }), true);
    assert.equal(isTyping(null), false);
  });

  test("Enter on a button or link is theirs", () => {
    assert.equal(taggingKey(key("Enter", { target: { tagName: "BUTTON" } })), null);
    assert.equal(taggingKey(key("Enter", { target: { tagName: "A" } })), null);
    assert.deepEqual(taggingKey(key("s", { target: { tagName: "BUTTON" } })), { action: "save", prevent: true });
  });
});

describe("lists", () => {
  test("j and k move; Enter opens only once a row is selected; not while typing", () => {
    assert.deepEqual([listKey(key("j")), listKey(key("k")), listKey(key("Enter")), listKey(key("Enter"), { selected: true })],
      ["next", "prev", null, "open"]);
    assert.equal(listKey(key("j", { target: { tagName: "INPUT" } })), null);
    assert.equal(listKey(key("j", { ctrlKey: true })), null);
  });
});

describe("the labelling pages", () => {
  const form = { hasForm: true };
  test("1, 2, r, Enter, ? on the item", () => {
    assert.deepEqual(["1", "2", "r", "Enter", "?", "x"].map((k) => labellingKey(key(k), form)),
      [{ action: "correct", prevent: true }, { action: "incorrect", prevent: true }, { action: "focusText", prevent: false },
        { action: "submit", prevent: true }, { action: "help", prevent: true }, null]);
  });

  test("s skip, f flag, p previous, g guideline: each opens its panel", () => {
    assert.deepEqual(["s", "f", "p", "g"].map((k) => labellingKey(key(k), form)),
      [{ action: "skip", prevent: true }, { action: "flag", prevent: true }, { action: "previous", prevent: true },
        { action: "guideline", prevent: true }]);
    assert.equal(labellingKey(key("s", { target: { tagName: "INPUT", type: "text" } }), form), null);
  });

  test("Enter on a link, a button or a summary is theirs, never submit", () => {
    for (const tagName of ["A", "BUTTON", "SUMMARY"]) assert.equal(labellingKey(key("Enter", { target: { tagName } }), form), null);
    assert.deepEqual(labellingKey(key("Enter", { target: { tagName: "INPUT", type: "radio" } }), form), { action: "submit", prevent: true });
  });

  test("Enter in the skip or flag reason submits that form natively, not the label", () => {
    const reason = { tagName: "INPUT", type: "text" };
    assert.equal(labellingKey(key("Enter", { target: reason }), { ...form, inForm: () => false }), null);
  });

  test("nothing without an item's form, and nothing modified", () => {
    assert.equal(labellingKey(key("1")), null);
    assert.equal(labellingKey(key("1", { altKey: true }), form), null);
  });

  test("with the help open only ? acts (Escape is the dialog's own)", () => {
    assert.deepEqual(labellingKey(key("?"), { ...form, helpOpen: true }), { action: "closeHelp", prevent: true });
    assert.equal(labellingKey(key("Escape"), { ...form, helpOpen: true }), null);
    assert.equal(labellingKey(key("1"), { ...form, helpOpen: true }), null);
  });

  test("in the rationale: Enter submits (Shift+Enter is a new line), Escape leaves, digits type", () => {
    const textarea = { tagName: "TEXTAREA" };
    const inForm = () => true;
    assert.deepEqual(labellingKey(key("Enter", { target: textarea }), { ...form, inForm }), { action: "submit", prevent: true });
    assert.equal(labellingKey(key("Enter", { target: textarea, shiftKey: true }), { ...form, inForm }), null);
    assert.equal(labellingKey(key("Enter", { target: textarea }), { ...form, inForm: () => false }), null);
    assert.deepEqual(labellingKey(key("Escape", { target: textarea }), form), { action: "leaveText", prevent: false });
    assert.equal(labellingKey(key("1", { target: textarea }), form), null);
  });

  test("a radio button is not a text box", () => {
    assert.equal(isTypingLabel({ tagName: "INPUT", type: "radio" }), false);
    assert.equal(isTypingLabel({ tagName: "INPUT", type: "search" }), true);
    assert.deepEqual(labellingKey(key("2", { target: { tagName: "INPUT", type: "radio" } }), form), { action: "incorrect", prevent: true });
  });
});

describe("a criterion's radio group on the labelling page", () => {
  test("digits pick an ordinal scale's values in order, letters a categorical one's", () => {
    const scale = { kind: "ordinal", count: 5 };
    const tone = { kind: "categorical", count: 3 };
    assert.deepEqual(["1", "3", "5", "6", "a"].map((k) => criterionKey(key(k), scale)), [0, 2, 4, null, null]);
    assert.deepEqual(["a", "b", "c", "d", "1"].map((k) => criterionKey(key(k), tone)), [0, 1, 2, null, null]);
  });

  test("a modified key or a named key is never a value", () => {
    const scale = { kind: "ordinal", count: 5 };
    assert.equal(criterionKey(key("1", { ctrlKey: true }), scale), null);
    assert.equal(criterionKey(key("Enter"), scale), null);
  });

  test("c goes to the first criterion from anywhere outside a text box", () => {
    const form = { hasForm: true, inForm: () => true };
    assert.deepEqual(labellingKey(key("c"), form), { action: "criteria", prevent: true });
  });
});
