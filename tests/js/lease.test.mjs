import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { leaseText } from "../../static/js/labelling/lease.js";

const NOW = Date.parse("2026-12-01T10:00:00Z");
const at = (seconds) => new Date(NOW + seconds * 1000).toISOString();

describe("the lease as the labelling page says it", () => {
  test("whole minutes left, rounded down", () => {
    assert.equal(leaseText(at(29 * 60 + 59), NOW), "held for 29 min");
    assert.equal(leaseText(at(30 * 60), NOW), "held for 30 min");
    assert.equal(leaseText(at(60), NOW), "held for 1 min");
  });
  test("under a minute, run out, hours, and a date it cannot read", () => {
    assert.equal(leaseText(at(59), NOW), "held for less than a minute");
    assert.equal(leaseText(at(0), NOW), "lease ran out: the item may go to someone else");
    assert.equal(leaseText(at(-5), NOW), "lease ran out: the item may go to someone else");
    assert.equal(leaseText(at(3 * 3600 + 5 * 60), NOW), "held for 3 h 5 min");
    assert.equal(leaseText("not a date", NOW), "");
  });
});
