import assert from "node:assert/strict";
import { describe, test } from "node:test";

import * as record from "../../static/js/tagging/record.js";
import { applyFields, createUndoStack, describe as describeStep, excerpt, fieldState, UNDO_DEPTH } from "../../static/js/tagging/undo.js";

const page = { no_answer_stratum: "no_answer", ambiguous_stratum: "ambiguous", username: "eve", today: "2026-12-01", record: { stratum: "policy" } };
const GOLD = { gold_doc_id: "kb:SEC", gold_chunk_id: "kb:SEC#0001", gold_text: "Single sign-on is available on Enterprise plans." };

/* An edit as the page makes it: the field state before, the change, the state after, onto the stack. */
function edit(stack, draft, kind, fn) {
  const before = fieldState(draft);
  fn();
  return stack.record({ kind, before, after: fieldState(draft) });
}

describe("the field state", () => {
  test("is a deep copy of every record field, missing ones as undefined", () => {
    const draft = { ...GOLD, gold_extra_chunk_ids: ["a"], stratum: "policy", question: "not a field" };
    const state = fieldState(draft);
    assert.deepEqual(Object.keys(state), record.FIELDS);
    assert.equal(state.expected, undefined);
    draft.gold_extra_chunk_ids.push("b");
    assert.deepEqual(state.gold_extra_chunk_ids, ["a"]);
  });

  test("applying undefined removes the field; other values are copied", () => {
    const draft = { expected: "x", grading: "span" };
    const extras = ["a"];
    applyFields(draft, { expected: undefined, gold_extra_chunk_ids: extras });
    extras.push("b");
    assert.deepEqual(draft, { grading: "span", gold_extra_chunk_ids: ["a"] });
  });
});

describe("the undo stack", () => {
  test("t over a gold, then undo: the previous gold exactly, named on the step", () => {
    const stack = createUndoStack();
    const draft = { stratum: "policy", ...GOLD };
    const step = edit(stack, draft, "tag", () => record.tagChunk(draft, page, null,
      { chunkId: "kb:SEC#0000", docId: "kb:SEC", chunkText: "Passwords rotate every ninety days.", narrowed: "" }));
    assert.equal(step.label, "replaced gold: kb:SEC#0001 “Single sign-on is available on Enterprise plans.”");
    assert.deepEqual(step.before, { gold_chunk_id: "kb:SEC#0001", gold_text: GOLD.gold_text });
    assert.equal(stack.undo(draft), step);
    assert.deepEqual(draft, { stratum: "policy", ...GOLD });
    assert.equal(stack.undo(draft), null);
  });

  test("x then undo restores the gold and the stratum; redo clears them again", () => {
    const stack = createUndoStack();
    const draft = { stratum: "policy", ...GOLD };
    const step = edit(stack, draft, "noAnswerOn", () => record.setNoAnswer(draft, page, null, true));
    assert.equal(step.label, "not answerable: cleared gold kb:SEC#0001 “Single sign-on is available on Enterprise plans.”");
    stack.undo(draft);
    assert.deepEqual(draft, { stratum: "policy", ...GOLD });
    assert.equal(stack.redo(draft), step);
    assert.deepEqual(draft, { stratum: "no_answer", gold_doc_id: null, gold_chunk_id: null, gold_text: null });
    assert.equal(stack.redo(draft), null);
  });

  test("several steps deep, undone last first; a new edit drops what was undone", () => {
    const stack = createUndoStack();
    const draft = { stratum: "policy", grading: "span" };
    edit(stack, draft, "grading", () => { draft.grading = "rubric"; });
    edit(stack, draft, "stratum", () => { draft.stratum = "pricing"; });
    edit(stack, draft, "addPassage", () => record.addPassage(draft, "d#2"));
    assert.deepEqual([stack.size, stack.top.label], [3, "added passage d#2"]);
    stack.undo(draft);
    stack.undo(draft);
    assert.deepEqual(draft, { stratum: "policy", grading: "rubric" });  // the extras were missing: missing again
    assert.equal(stack.nextRedo.label, "stratum policy → pricing");
    edit(stack, draft, "grading", () => { draft.grading = "judge"; });
    assert.equal(stack.nextRedo, null);
    assert.equal(stack.redo(draft), null);
    stack.undo(draft);
    stack.undo(draft);
    assert.deepEqual(draft, { stratum: "policy", grading: "span" });
  });

  test("undo puts back only the fields the step changed: later typing elsewhere stays", () => {
    const stack = createUndoStack();
    const draft = { stratum: "policy", ...GOLD };
    edit(stack, draft, "tag", () => record.tagChunk(draft, page, null, { chunkId: "d#9", docId: "d", chunkText: "Other.", narrowed: "" }));
    draft.expected = "typed after the tag";
    stack.undo(draft);
    assert.deepEqual(draft, { stratum: "policy", ...GOLD, expected: "typed after the tag" });
  });

  test("an edit that changed nothing is no step", () => {
    const stack = createUndoStack();
    const draft = { gold_chunk_id: "d#1" };
    assert.equal(edit(stack, draft, "addPassage", () => record.addPassage(draft, "d#1")), null);
    assert.equal(stack.size, 0);
  });

  test("keeps the last UNDO_DEPTH steps, dropping the oldest", () => {
    const stack = createUndoStack({ depth: 3 });
    const draft = { expected: "0" };
    for (let i = 1; i <= 5; i++) edit(stack, draft, "expected", () => { draft.expected = String(i); });
    assert.equal(stack.size, 3);
    while (stack.undo(draft));
    assert.equal(draft.expected, "2");
    assert.equal(UNDO_DEPTH, 50);
  });

  test("the marks before and after travel with the step", () => {
    const stack = createUndoStack();
    const step = stack.record({ kind: "stratum", before: { stratum: "a" }, after: { stratum: "b" }, marks: ["m0", "m1"] });
    assert.deepEqual(step.marks, ["m0", "m1"]);
  });
});

describe("what a step is called", () => {
  const gold = { stratum: "policy", ...GOLD };
  test("tagging: replaced (chunk or text changed) or tagged afresh", () => {
    assert.equal(describeStep("tag", {}, { gold_chunk_id: "d#1", gold_text: "x" }), "tagged gold: d#1 “x”");
    assert.equal(describeStep("tag", { gold_chunk_id: "d#1", gold_text: "long text" }, { gold_chunk_id: "d#1", gold_text: "long" }),
      "replaced gold: d#1 “long text”");
  });

  test("the marks, the passages, the choices", () => {
    assert.deepEqual([
      describeStep("noAnswerOn", { stratum: "policy" }, {}),
      describeStep("noAnswerOff", { stratum: "no_answer" }, gold),
      describeStep("noAnswerOff", {}, {}),
      describeStep("ambiguousOn", {}, {}), describeStep("ambiguousOff", {}, {}),
      describeStep("removePassage", gold, { stratum: "policy" }),
      describeStep("removePassage", { gold_extra_chunk_ids: ["a", "b"] }, { gold_extra_chunk_ids: ["a"] }),
      describeStep("grading", {}, { grading: "span" }),
      describeStep("gold_text", {}, {}), describeStep("expected", {}, {}), describeStep("theirs", {}, {}),
    ], [
      "marked not answerable",
      "answerable again: gold kb:SEC#0001 “Single sign-on is available on Enterprise plans.” restored",
      "answerable again",
      "marked ambiguous", "unmarked ambiguous",
      "removed gold kb:SEC#0001 “Single sign-on is available on Enterprise plans.”",
      "removed passage b",
      "grading — → span",
      "edited gold_text", "edited expected", "took their version (yours dropped)",
    ]);
  });

  test("excerpts collapse spaces and stop at 60 characters with an ellipsis", () => {
    assert.equal(excerpt("  a \n b  "), "a b");
    const long = "word ".repeat(30);
    assert.equal(excerpt(long).length, 60);
    assert.equal(excerpt(long).endsWith("…"), true);
    assert.equal(excerpt(null), "");
  });
});
