import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { createApi, csrfToken } from "../../static/js/tagging/api.js";
import { goldTextMissing, locate } from "../../static/js/tagging/chunk_viewer.js";
import { conflictRows } from "../../static/js/tagging/conflict.js";
import { clampIndex } from "../../static/js/tagging/search.js";
import { statusOf } from "../../static/js/tagging/status.js";
import { renewLease } from "../../static/js/labelling/lease.js";
import { response } from "./helpers.mjs";

describe("the save status line", () => {
  test("says, for each event of the queue", () => {
    assert.deepEqual(statusOf({ type: "idle", revision: 3 }), ["All changes saved (revision 3).", "ok"]);
    assert.deepEqual(statusOf({ type: "saving", attempt: 1 }), ["Saving…", "muted"]);
    assert.deepEqual(statusOf({ type: "saving", attempt: 2 }), ["Saving (attempt 2)…", "muted"]);
    assert.deepEqual(statusOf({ type: "saved", revision: 4, replayed: false }), ["Saved (revision 4).", "ok"]);
    assert.deepEqual(statusOf({ type: "saved", revision: 4, replayed: true }), ["Saved (revision 4), once.", "ok"]);
    assert.deepEqual(statusOf({ type: "retrying", status: null, wait: 600 }),
      ["Not saved yet (network error); retrying in 1 s. Your changes are kept.", "warn"]);
    assert.deepEqual(statusOf({ type: "retrying", status: 503, wait: 2100 }),
      ["Not saved yet (server error 503); retrying in 3 s. Your changes are kept.", "warn"]);
    assert.equal(statusOf({ type: "signed_out", status: 403 })[1], "bad");
    assert.deepEqual(statusOf({ type: "refused", status: 422, info: { error: "bad input", problems: [{ field: "grading", message: "unknown" }, { message: "and this" }] } }),
      ["Not saved: bad input (grading: unknown; and this)", "bad"]);
    assert.deepEqual(statusOf({ type: "refused", status: 400, info: {} }), ["Not saved: 400", "bad"]);
    assert.deepEqual(statusOf({ type: "refused", status: 400, info: { detail: "nope" } }), ["Not saved: nope", "bad"]);
  });
});

describe("the api", () => {
  test("the CSRF token comes from <body hx-headers>; none when it is missing or broken", () => {
    const body = (v) => ({ getAttribute: () => v });
    assert.equal(csrfToken(body('{"X-CSRFToken": "abc"}')), "abc");
    assert.equal(csrfToken(body(null)), "");
    assert.equal(csrfToken(body("{broken")), "");
  });

  test("a write is a same-origin PATCH of JSON with the token", async () => {
    const calls = [];
    const api = createApi({ fetchImpl: async (...args) => { calls.push(args); return response(200); }, token: () => "tok" });
    await api.patchJSON("/api/x/", { a: 1 });
    await api.getJSON("/api/x/");
    await api.getHTML("/frag/");
    assert.deepEqual(calls, [
      ["/api/x/", { method: "PATCH", credentials: "same-origin", body: '{"a":1}',
        headers: { "Content-Type": "application/json", "X-CSRFToken": "tok", "Accept": "application/json" } }],
      ["/api/x/", { credentials: "same-origin", headers: { Accept: "application/json" } }],
      ["/frag/", { credentials: "same-origin", headers: { "HX-Request": "true" } }],
    ]);
  });
});

describe("the chunk viewer and the results", () => {
  test("gold_text is flagged only when the chunk does not hold it (spaces and case aside)", () => {
    assert.equal(goldTextMissing("Single  sign-on\nis available.", "single sign-on is"), false);
    assert.equal(goldTextMissing("Passwords rotate.", "single sign-on"), true);
    assert.equal(goldTextMissing("anything", null), false);
    assert.equal(goldTextMissing(null, "x"), true);
  });

  test("locate maps an offset into joined text nodes back to a node and an offset in it", () => {
    const nodes = [["a", 0], ["b", 5], ["c", 9]];
    assert.deepEqual([0, 4, 5, 8, 9, 12].map((o) => locate(nodes, o)), [["a", 0], ["a", 4], ["b", 0], ["b", 3], ["c", 0], ["c", 3]]);
  });

  test("moving through results stays within them", () => {
    assert.deepEqual([clampIndex(-1, 3), clampIndex(0, 3), clampIndex(5, 3), clampIndex(0, 0)], [0, 0, 2, -1]);
  });

  test("the conflict table: theirs and mine in JSON, missing as null, without the date", () => {
    assert.deepEqual(conflictRows({ expected: "ninety days" }, { expected: "90 days", grading: "extraction", labelled_at: "2026-12-01" }),
      [["expected", '"ninety days"', '"90 days"'], ["grading", "null", '"extraction"']]);
  });
});

describe("the lease", () => {
  function fakeForm(renewUrl) {
    const prepended = [];
    const lease = { textContent: "old", attrs: {}, setAttribute(k, v) { this.attrs[k] = v; } };
    return {
      dataset: renewUrl ? { renewUrl } : {}, prepended, lease,
      ownerDocument: { createElement: () => ({ attrs: {}, setAttribute(k, v) { this.attrs[k] = v; } }) },
      querySelector: (sel) => (sel === "time.lease" ? lease : sel === "input[name=csrfmiddlewaretoken]" ? { value: "tok" } : null),
      prepend: (el) => prepended.push(el),
    };
  }

  test("a renewal posts with the form's token and shows the new expiry", async () => {
    const form = fakeForm("/renew/");
    const calls = [];
    await renewLease(form, { fetchImpl: async (...args) => { calls.push(args); return response(200, { lease_expires_at: "2026-12-01T14:00:00Z" }); },
                             now: () => Date.parse("2026-12-01T13:30:00Z") });
    assert.deepEqual(calls, [["/renew/", { method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": "tok", "Accept": "application/json" } }]]);
    assert.equal(form.lease.textContent, "held for 30 min");
    assert.deepEqual(form.lease.attrs, { datetime: "2026-12-01T14:00:00Z" });
  });

  test("409: a note that the lease was lost; offline: nothing changes", async () => {
    const form = fakeForm("/renew/");
    await renewLease(form, { fetchImpl: async () => response(409) });
    assert.equal(form.prepended.length, 1);
    assert.equal(form.prepended[0].textContent, "Your lease on this item was lost; reload the page for the next item.");
    assert.deepEqual([form.prepended[0].className, form.prepended[0].attrs], ["errors", { role: "alert" }]);
    await renewLease(form, { fetchImpl: async () => { throw new TypeError("offline"); } });
    assert.equal(form.lease.textContent, "old");
  });

  test("no renew URL: no request", async () => {
    await renewLease(fakeForm(null), { fetchImpl: () => assert.fail("fetched") });
  });
});
