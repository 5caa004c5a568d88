import assert from "node:assert/strict";
import { describe, test } from "node:test";

import * as record from "../../static/js/tagging/record.js";

const page = { no_answer_stratum: "no_answer", ambiguous_stratum: "ambiguous", username: "eve", today: "2026-12-01", record: { stratum: "policy" } };

describe("changes", () => {
  test("none when the draft means what is saved (missing = null = '', [] = absent, ambiguous false = absent)", () => {
    const saved = { expected: "x", stratum: "policy" };
    const draft = { expected: "x", stratum: "policy", grading: "", gold_text: null, gold_extra_chunk_ids: [], ambiguous: false };
    assert.deepEqual(record.changes(draft, saved, page), {});
  });

  test("the changed fields, then labelled_by and labelled_at when they differ", () => {
    assert.deepEqual(record.changes({ expected: "y", stratum: "policy" }, { expected: "x", stratum: "policy" }, page),
      { expected: "y", labelled_by: "eve", labelled_at: "2026-12-01" });
    assert.deepEqual(record.changes({ expected: "y" }, { expected: "x", labelled_by: "eve", labelled_at: "2026-12-01" }, page),
      { expected: "y" });
  });

  test("a cleared field is sent as null", () => {
    assert.deepEqual(record.changes({ expected: undefined, labelled_by: "eve" }, { expected: "x", labelled_by: "eve", labelled_at: "2026-12-01" }, page),
      { expected: null });
  });

  test("not answerable: gold fields missing from the saved record are written as explicit nulls", () => {
    assert.deepEqual(record.changes({ stratum: "no_answer" }, { stratum: "policy", gold_text: null }, page),
      { stratum: "no_answer", gold_doc_id: null, gold_chunk_id: null, labelled_by: "eve", labelled_at: "2026-12-01" });
  });

  test("stillNeeded: kept work that the saved record already holds is not", () => {
    assert.equal(record.stillNeeded({ expected: "x", labelled_by: "other" }, { expected: "x" }), false);
    assert.equal(record.stillNeeded({ expected: "y" }, { expected: "x" }), true);
  });
});

describe("edits", () => {
  test("tagging the whole chunk, then a selection", () => {
    const draft = { stratum: "policy" };
    assert.equal(record.tagChunk(draft, page, null, { chunkId: "d#1", docId: "d", chunkText: "  Whole text.  ", narrowed: "" }), "whole");
    assert.deepEqual(draft, { stratum: "policy", gold_chunk_id: "d#1", gold_doc_id: "d", gold_text: "Whole text." });
    assert.equal(record.tagChunk(draft, page, null, { chunkId: "d#1", docId: "d", chunkText: "Whole text.", narrowed: "Whole" }), "narrowed");
    assert.equal(draft.gold_text, "Whole");
  });

  test("moving stale gold keeps its gold_text when the new chunk holds it, and drops the chunk from the extras", () => {
    const draft = { gold_chunk_id: "d#1", gold_text: "sign-on  is available", gold_extra_chunk_ids: ["d#2", "d#3"] };
    assert.equal(record.tagChunk(draft, page, null, { chunkId: "d#2", docId: "d", chunkText: "Single Sign-on is available.", narrowed: "" }), "kept");
    assert.deepEqual(draft, { gold_chunk_id: "d#2", gold_doc_id: "d", gold_text: "sign-on  is available", gold_extra_chunk_ids: ["d#3"] });
  });

  test("tagging a not-answerable question makes it answerable again, in its earlier stratum", () => {
    const draft = { stratum: "comparison" };
    const mark = record.setNoAnswer(draft, page, null, true);
    assert.deepEqual(draft, { stratum: "no_answer", gold_doc_id: null, gold_chunk_id: null, gold_text: null });
    record.tagChunk(draft, page, mark, { chunkId: "d#1", docId: "d", chunkText: "t", narrowed: "" });
    assert.equal(draft.stratum, "comparison");
  });

  test("not answerable, then unticked: the gold it cleared comes back exactly, extras and all", () => {
    const gold = { gold_doc_id: "d", gold_chunk_id: "d#1", gold_text: "Thirty days.", gold_extra_chunk_ids: ["d#2"] };
    const draft = { stratum: "policy", ...structuredClone(gold) };
    const mark = record.setNoAnswer(draft, page, null, true);
    assert.deepEqual(draft, { stratum: "no_answer", gold_doc_id: null, gold_chunk_id: null, gold_text: null, gold_extra_chunk_ids: [] });
    const after = record.setNoAnswer(draft, page, mark, false);
    assert.deepEqual(draft, { stratum: "policy", ...gold });
    assert.deepEqual(after, { stratum: "policy", gold: null });  // given back once: a later x clears afresh
  });

  test("a field that was missing before not answerable is missing again after it", () => {
    const draft = { stratum: "policy", gold_doc_id: "d", gold_chunk_id: "d#1", gold_text: "t" };
    const mark = record.setNoAnswer(draft, page, null, true);
    record.setNoAnswer(draft, page, mark, false);
    assert.deepEqual(draft, { stratum: "policy", gold_doc_id: "d", gold_chunk_id: "d#1", gold_text: "t" });
    assert.equal("gold_extra_chunk_ids" in draft, false);
  });

  test("unticking not answerable after tagging a new gold keeps the new one", () => {
    const draft = { stratum: "policy", gold_doc_id: "d", gold_chunk_id: "d#1", gold_text: "old" };
    const mark = record.setNoAnswer(draft, page, null, true);
    record.tagChunk(draft, page, mark, { chunkId: "e#4", docId: "e", chunkText: "new", narrowed: "" });
    record.setNoAnswer(draft, page, mark, false);
    assert.deepEqual(draft, { stratum: "policy", gold_doc_id: "e", gold_chunk_id: "e#4", gold_text: "new" });
  });

  test("not answerable, ambiguous on and off, not answerable off: the gold still comes back", () => {
    const draft = { stratum: "policy", gold_doc_id: "d", gold_chunk_id: "d#1", gold_text: "t" };
    let mark = record.setNoAnswer(draft, page, null, true);
    mark = record.setAmbiguous(draft, page, mark, true);
    mark = record.setAmbiguous(draft, page, mark, false);
    record.setNoAnswer(draft, page, mark, false);
    assert.deepEqual(draft, { stratum: "policy", gold_doc_id: "d", gold_chunk_id: "d#1", gold_text: "t", ambiguous: false });
  });

  test("unticking not answerable falls back to the page's stratum when there is no earlier one", () => {
    const draft = { stratum: "no_answer" };
    record.setNoAnswer(draft, page, null, false);
    assert.equal(draft.stratum, "policy");
  });

  test("passages: add once, never the gold chunk; remove either kind", () => {
    const draft = { gold_chunk_id: "d#1" };
    assert.equal(record.addPassage(draft, "d#1"), false);
    assert.equal(record.addPassage(draft, "d#2"), true);
    assert.equal(record.addPassage(draft, "d#2"), true);
    assert.deepEqual(record.passages(draft), [{ id: "d#1", primary: true }, { id: "d#2", primary: false }]);
    record.removePassage(draft, "d#2", false);
    record.removePassage(draft, "d#1", true);
    assert.deepEqual(draft, { gold_chunk_id: null, gold_doc_id: null, gold_text: null, gold_extra_chunk_ids: [] });
  });

  test("ambiguous moves to the ambiguous stratum and back", () => {
    const draft = { stratum: "policy" };
    const mark = record.setAmbiguous(draft, page, null, true);
    assert.deepEqual(draft, { stratum: "ambiguous", ambiguous: true });
    record.setAmbiguous(draft, page, mark, false);
    assert.deepEqual(draft, { stratum: "policy", ambiguous: false });
    const noStratum = { ...page, ambiguous_stratum: null };
    const d2 = { stratum: "policy" };
    record.setAmbiguous(d2, noStratum, null, true);
    assert.deepEqual(d2, { stratum: "policy", ambiguous: true });
  });
});
