import assert from "node:assert/strict";
import { describe, test } from "node:test";

import * as record from "../../static/js/tagging/record.js";
import { createSaveQueue, isRetryable } from "../../static/js/tagging/save_queue.js";
import { deferred, fakeServer, response, settle } from "./helpers.mjs";

/* The draft's fields that differ from what is saved. */
const plainDiff = (draft) => (saved) => {
  const out = {};
  Object.keys(draft).forEach((k) => { if (JSON.stringify(draft[k]) !== JSON.stringify(saved[k])) out[k] = draft[k]; });
  return out;
};

function fakeTimers() {
  const timers = { scheduled: [], cleared: [] };
  timers.set = (fn, ms) => { const t = { fn, ms }; timers.scheduled.push(t); return t; };
  timers.clear = (t) => { timers.cleared.push(t); };
  timers.fire = () => { const live = timers.scheduled.filter((t) => !timers.cleared.includes(t)); timers.scheduled = []; live.forEach((t) => t.fn()); };
  return timers;
}

/* A queue on `draft` against `send`; every key, wait and event is recorded. */
function harness({ draft, saved = {}, revision = 0, send, server, seconds = 12.5 }) {
  const h = { draft, events: [], waits: [], conflicts: [], savedData: [], keys: 0, seconds };
  h.timers = fakeTimers();
  h.clock = { pending: () => h.seconds, consume: (s) => { h.seconds = Math.round((h.seconds - s) * 10) / 10; } };
  h.send = send || ((body) => server.apply(body));
  h.queue = createSaveQueue({
    saved, revision, diff: (s) => plainDiff(h.draft)(s), send: (body) => h.send(body), clock: h.clock,
    onEvent: (e) => h.events.push(e),
    onSaved: (data) => h.savedData.push(data),
    onConflict: async (message, mine) => { h.conflicts.push({ message, mine }); },
    clientKey: () => `key-${++h.keys}`,
    sleep: async (ms) => { h.waits.push(ms); },
    random: () => 0.5,
    timers: h.timers,
  });
  return h;
}

describe("what is pending", () => {
  test("is the draft against the saved record, and empty once the save lands", async () => {
    const server = fakeServer({ expected: "old" });
    const h = harness({ draft: { expected: "90 days" }, saved: { expected: "old" }, server });
    assert.deepEqual(h.queue.pending(), { expected: "90 days" });
    assert.equal(h.queue.busy(), true);
    assert.equal(await h.queue.save(), true);
    assert.deepEqual(h.queue.pending(), {});
    assert.equal(h.queue.busy(), false);
    assert.deepEqual(h.queue.saved, { expected: "90 days" });
    assert.equal(h.queue.revision, 1);
  });

  test("an edit made while a save is in flight is still pending after it lands", async () => {
    const reply = deferred();
    const h = harness({ draft: { expected: "a" }, send: () => reply.promise });
    const saving = h.queue.save();
    assert.equal(h.queue.inFlight, true);
    assert.equal(h.queue.busy(), true);
    h.draft.grading = "extraction";
    reply.resolve(response(200, { record: { expected: "a" }, revision: 1 }));
    await settle();
    assert.deepEqual(h.queue.pending(), { grading: "extraction" });
    assert.equal(await saving, true);  // that round is done; the edit waits for the next save
  });

  test("nothing pending: no request, and the status says all is saved at the revision", async () => {
    const h = harness({ draft: { expected: "a" }, saved: { expected: "a" }, revision: 4, send: () => assert.fail("sent") });
    assert.equal(await h.queue.save(), true);
    assert.deepEqual(h.events, [{ type: "idle", revision: 4 }]);
  });
});

describe("a save", () => {
  test("sends only the changed fields against the revision, with the active seconds and one client key", async () => {
    const server = fakeServer({ expected: "x", grading: "extraction" }, 3);
    const h = harness({ draft: { expected: "y", grading: "extraction" }, saved: server.record, revision: 3, server });
    await h.queue.save();
    assert.deepEqual(server.bodies, [{ changes: { expected: "y" }, base_revision: 3, active_seconds: 12.5, client_key: "key-1" }]);
    assert.deepEqual(h.events, [{ type: "saving", attempt: 1 }, { type: "saved", revision: 4, replayed: false }]);
    assert.deepEqual(h.savedData, [{ record: { expected: "y", grading: "extraction" }, revision: 4 }]);
  });

  test("consumes the active seconds it sent, not those counted while it was on its way", async () => {
    const reply = deferred();
    const h = harness({ draft: { expected: "y" }, send: () => reply.promise, seconds: 10 });
    const saving = h.queue.save();
    h.seconds = 13;  // three more seconds of work while the request travels
    reply.resolve(response(200, { record: { expected: "y" }, revision: 1 }));
    await saving;
    assert.equal(h.seconds, 3);
  });
});

describe("order and coalescing", () => {
  test("never two in flight: saves asked for meanwhile become one more, sent after the first lands", async () => {
    const replies = [];
    const bodies = [];
    const h = harness({ draft: { expected: "a" }, send: (body) => { bodies.push(body); const d = deferred(); replies.push(d); return d.promise; } });
    const first = h.queue.save();
    await settle();
    h.draft.expected = "ab";
    const second = h.queue.save();
    h.draft.expected = "abc";
    const third = h.queue.save();
    assert.equal(second, first);
    assert.equal(third, first);
    await settle();
    assert.equal(bodies.length, 1);  // the second waits for the first
    replies[0].resolve(response(200, { record: { expected: "a" }, revision: 1 }));
    await settle();
    assert.equal(bodies.length, 2);
    assert.deepEqual(bodies.map((b) => [b.changes, b.base_revision, b.client_key]),
      [[{ expected: "a" }, 0, "key-1"], [{ expected: "abc" }, 1, "key-2"]]);
    replies[1].resolve(response(200, { record: { expected: "abc" }, revision: 2 }));
    assert.equal(await first, true);
    assert.equal(bodies.length, 2);
    assert.equal(h.queue.revision, 2);
    assert.equal(h.queue.inFlight, false);
  });

  test("an edit undone while the first save travels sends nothing more", async () => {
    const reply = deferred();
    let sent = 0;
    const h = harness({ draft: { expected: "a" }, send: () => { sent++; return reply.promise; } });
    const saving = h.queue.save();
    h.draft.expected = "ab";
    h.queue.save();
    h.draft.expected = "a";
    reply.resolve(response(200, { record: { expected: "a" }, revision: 1 }));
    assert.equal(await saving, true);
    assert.equal(sent, 1);
    assert.deepEqual(h.events.at(-1), { type: "idle", revision: 1 });
  });

  test("schedule() waits for the typing to pause: each call restarts the wait, and one save follows", async () => {
    const server = fakeServer();
    const h = harness({ draft: { expected: "a" }, server });
    h.queue.schedule();
    h.queue.schedule();
    h.queue.schedule();
    assert.deepEqual(h.timers.scheduled.map((t) => t.ms), [800, 800, 800]);
    assert.equal(h.timers.cleared.length, 2);
    assert.equal(server.bodies.length, 0);
    h.timers.fire();
    await settle();
    assert.equal(server.bodies.length, 1);
  });

  test("save() now cancels the scheduled one", async () => {
    const server = fakeServer();
    const h = harness({ draft: { expected: "a" }, server });
    h.queue.schedule();
    await h.queue.save();
    h.timers.fire();
    await settle();
    assert.equal(server.bodies.length, 1);
  });
});

describe("retry after a failure", () => {
  test("a network error resends the identical body (same client key) after a growing wait", async () => {
    const bodies = [];
    let n = 0;
    const h = harness({
      draft: { expected: "90 days" },
      send: async (body) => { bodies.push(structuredClone(body)); if (++n <= 3) throw new TypeError("Failed to fetch"); return response(200, { record: body.changes, revision: 1 }); },
    });
    assert.equal(await h.queue.save(), true);
    assert.equal(bodies.length, 4);
    bodies.forEach((b) => assert.deepEqual(b, bodies[0]));
    assert.equal(bodies[0].client_key, "key-1");
    assert.deepEqual(h.waits, [600, 1100, 2100]);  // 500, 1000, 2000 ms plus the jitter (0.5 * 200)
    assert.deepEqual(h.events, [
      { type: "saving", attempt: 1 }, { type: "retrying", status: null, wait: 600 },
      { type: "saving", attempt: 2 }, { type: "retrying", status: null, wait: 1100 },
      { type: "saving", attempt: 3 }, { type: "retrying", status: null, wait: 2100 },
      { type: "saving", attempt: 4 }, { type: "saved", revision: 1, replayed: false },
    ]);
  });

  test("the wait doubles up to 30 s and stays there", async () => {
    let n = 0;
    const h = harness({ draft: { expected: "a" }, send: async (body) => (++n <= 9 ? response(503) : response(200, { record: body.changes, revision: 1 })) });
    await h.queue.save();
    assert.deepEqual(h.waits.map((w) => w - 100), [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  for (const status of [500, 502, 503, 408, 429]) {
    test(`${status} is retried`, async () => {
      let n = 0;
      const h = harness({ draft: { expected: "a" }, send: async (body) => (++n === 1 ? response(status) : response(200, { record: body.changes, revision: 1 })) });
      assert.equal(await h.queue.save(), true);
      assert.deepEqual(h.events[1], { type: "retrying", status, wait: 600 });
      assert.equal(n, 2);
    });
  }

  test("a lost reply: the retry is replayed by the server and the change lands once", async () => {
    const server = fakeServer({}, 0);
    let n = 0;
    const h = harness({ draft: { expected: "90 days" }, send: async (body) => { const r = server.apply(body); if (++n === 1) throw new TypeError("lost"); return r; } });
    assert.equal(await h.queue.save(), true);
    assert.equal(server.revision, 1);
    assert.equal(server.keys.size, 1);
    assert.deepEqual(h.events.at(-1), { type: "saved", revision: 1, replayed: true });
  });

  test("isRetryable: the network, 5xx, 408 and 429; no other 4xx", () => {
    assert.deepEqual([null, 500, 503, 408, 429, 400, 404, 413, 422].map(isRetryable),
      [true, true, true, true, true, false, false, false, false]);
  });
});

describe("nothing is lost when a save fails", () => {
  test("a refusal (422) stops, says why, and keeps the changes pending for the next save under a new key", async () => {
    const bodies = [];
    let refuse = true;
    const h = harness({
      draft: { expected: "a", grading: "nonsense" },
      send: async (body) => {
        bodies.push(body);
        if (refuse) return response(422, { error: "bad input", problems: [{ field: "grading", message: "unknown" }] });
        return response(200, { record: body.changes, revision: 1 });
      },
    });
    assert.equal(await h.queue.save(), false);
    assert.deepEqual(h.events.at(-1), { type: "refused", status: 422, info: { error: "bad input", problems: [{ field: "grading", message: "unknown" }] } });
    assert.deepEqual(h.queue.pending(), { expected: "a", grading: "nonsense" });
    assert.equal(h.queue.busy(), true);
    assert.deepEqual(h.waits, []);
    refuse = false;
    assert.equal(await h.queue.save(), true);
    assert.deepEqual(bodies.map((b) => b.client_key), ["key-1", "key-2"]);
    assert.deepEqual(bodies[1].changes, { expected: "a", grading: "nonsense" });
  });

  for (const status of [401, 403]) {
    test(`${status}: signed out, not retried, changes kept`, async () => {
      let n = 0;
      const h = harness({ draft: { expected: "a" }, send: async () => { n++; return response(status); } });
      assert.equal(await h.queue.save(), false);
      assert.equal(n, 1);
      assert.deepEqual(h.events.at(-1), { type: "signed_out", status });
      assert.deepEqual(h.queue.pending(), { expected: "a" });
    });
  }

  test("a refused first round ends the coalesced one too; both callers hear false", async () => {
    const reply = deferred();
    let n = 0;
    const h = harness({ draft: { expected: "a" }, send: () => { n++; return reply.promise; } });
    const first = h.queue.save();
    h.draft.expected = "ab";
    const second = h.queue.save();
    reply.resolve(response(400, {}));
    assert.equal(await first, false);
    assert.equal(await second, false);
    assert.equal(n, 1);
    assert.deepEqual(h.queue.pending(), { expected: "ab" });
  });

  test("a failed request does not move the baseline: no seconds consumed, no revision change", async () => {
    const h = harness({ draft: { expected: "a" }, revision: 2, send: async () => response(400, {}) });
    await h.queue.save();
    assert.equal(h.queue.revision, 2);
    assert.equal(h.seconds, 12.5);
    assert.deepEqual(h.savedData, []);
  });
});

describe("conflicts", () => {
  test("409: the conflict is shown with the changes, nothing more is sent until resolved", async () => {
    const server = fakeServer({ expected: "old" }, 0);
    server.otherSaves({ expected: "ninety days" });
    const h = harness({ draft: { expected: "90 days" }, saved: { expected: "old" }, server });
    assert.equal(await h.queue.save(), false);
    assert.deepEqual(h.conflicts, [{ message: "revision 1 is by ola", mine: { expected: "90 days" } }]);
    assert.equal(h.queue.inConflict, true);
    assert.equal(await h.queue.save(), false);
    h.queue.schedule();
    h.timers.fire();
    await settle();
    assert.equal(server.bodies.length, 1);
    assert.equal(server.record.expected, "ninety days");
    // "Save mine over theirs": their record becomes the baseline, and mine goes on top of it.
    h.queue.resolve(server.record, server.revision);
    assert.equal(h.queue.inConflict, false);
    assert.equal(await h.queue.save(), true);
    assert.deepEqual(server.bodies[1].changes, { expected: "90 days" });
    assert.equal(server.bodies[1].base_revision, 1);
    assert.deepEqual([server.revision, server.record.expected], [2, "90 days"]);
  });

  test("409 without an error message says another expert saved first", async () => {
    const h = harness({ draft: { expected: "a" }, send: async () => ({ ok: false, status: 409, json: async () => { throw new SyntaxError("not json"); } }) });
    await h.queue.save();
    assert.deepEqual(h.conflicts, [{ message: "Another expert saved this question first.", mine: { expected: "a" } }]);
  });

  test("a retried save that another expert overtook lands, then shows the conflict", async () => {
    const server = fakeServer({}, 0);
    let n = 0;
    const h = harness({
      draft: { expected: "90 days" },
      send: async (body) => {
        const r = server.apply(body);
        if (++n === 1) { server.otherSaves({ expected: "ninety days" }); throw new TypeError("lost"); }
        return r;
      },
    });
    assert.equal(await h.queue.save(), false);
    assert.equal(server.bodies.length, 2);
    assert.deepEqual(server.bodies[0], server.bodies[1]);
    assert.equal(h.queue.revision, 2);
    assert.deepEqual(h.queue.saved, { expected: "ninety days" });
    assert.deepEqual(h.conflicts, [{ message: "Your save landed, but another expert saved this question after it (now revision 2).", mine: { expected: "90 days" } }]);
    assert.equal(h.savedData.length, 1);  // the baseline moved (and was remembered) before the conflict
    assert.equal(h.queue.inConflict, true);
  });

  test("a replay that is still the latest revision is a plain save", async () => {
    const h = harness({ draft: { expected: "a" }, revision: 5, send: async () => response(200, { record: { expected: "a" }, revision: 6, replayed: true }) });
    assert.equal(await h.queue.save(), true);
    assert.deepEqual(h.conflicts, []);
    assert.deepEqual(h.events.at(-1), { type: "saved", revision: 6, replayed: true });
  });

  test("conflict() from the page (work kept from an older revision) holds the queue too", async () => {
    const h = harness({ draft: { expected: "a" }, send: () => assert.fail("sent") });
    await h.queue.conflict("You had unsaved changes from revision 1; the question is now at revision 3.", { expected: "a" });
    assert.equal(h.queue.inConflict, true);
    assert.equal(await h.queue.save(), false);
  });
});

describe("with the record's own diff", () => {
  test("a not-answerable save writes the gold fields as nulls, and who labelled it when", async () => {
    const page = { no_answer_stratum: "no_answer", username: "eve", today: "2026-12-01", record: { stratum: "policy" } };
    const server = fakeServer({ qid: "q-5", stratum: "policy" }, 0);
    const draft = { qid: "q-5", stratum: "no_answer" };
    const queue = createSaveQueue({
      saved: server.record, revision: 0, diff: (saved) => record.changes(draft, saved, page),
      send: async (body) => server.apply(body), clock: { pending: () => 0, consume() {} }, clientKey: () => "k",
    });
    assert.equal(await queue.save(), true);
    assert.deepEqual(server.bodies[0].changes, {
      stratum: "no_answer", gold_doc_id: null, gold_chunk_id: null, gold_text: null, labelled_by: "eve", labelled_at: "2026-12-01",
    });
    assert.deepEqual(queue.pending(), {});
  });
});
