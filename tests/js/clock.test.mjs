import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { createActiveClock } from "../../static/js/tagging/clock.js";
import { createItemClock } from "../../static/js/labelling/clock.js";

describe("the tagging clock", () => {
  test("counts ticks while visible and within 30 s of the last input", () => {
    let t = 0, visible = true;
    const clock = createActiveClock({ now: () => t, visible: () => visible });
    const run = (ms) => { for (let i = 0; i < ms / 1000; i++) { t += 1000; clock.tick(); } };
    run(10000);            // 10 s of work
    run(600000);           // then away: counted until 30 s after the last input
    assert.equal(clock.pending(), 29);  // the tick at exactly 30 s does not count
    visible = false;
    clock.resync();
    clock.touch();
    run(20000);
    assert.equal(clock.pending(), 29);  // input in a hidden tab does not count
    visible = true;
    clock.resync();
    clock.touch();
    run(3000);
    assert.equal(clock.pending(), 32);
  });

  test("a long gap between ticks (a suspended laptop) counts as 2 s at most", () => {
    let t = 0;
    const clock = createActiveClock({ now: () => t });
    t = 1000; clock.touch();
    t = 21000; clock.tick();
    assert.equal(clock.pending(), 2);
  });

  test("consume takes off what a save sent, never below zero", () => {
    let t = 0;
    const clock = createActiveClock({ now: () => t });
    for (let i = 0; i < 5; i++) { t += 1000; clock.tick(); }
    clock.consume(3);
    assert.equal(clock.pending(), 2);
    clock.consume(10);
    assert.equal(clock.pending(), 0);
  });
});

describe("the labelling clock", () => {
  test("runs while visible, pauses on blur, and starts from zero for each item", () => {
    let t = 0, visible = true;
    const clock = createItemClock({ now: () => t, visible: () => visible });
    clock.start();
    t = 4000;
    clock.pause();
    t = 60000;
    visible = true;
    clock.resume();
    t = 61500;
    assert.equal(clock.seconds(), "5.5");
    t = 70000;
    assert.equal(clock.seconds(), "14.0");
    clock.start();
    t = 71000;
    assert.equal(clock.seconds(), "1.0");
  });

  test("does not resume while hidden, and reports a day at most", () => {
    let t = 0, visible = false;
    const clock = createItemClock({ now: () => t, visible: () => visible });
    clock.start();
    t = 5000;
    clock.resume();
    assert.equal(clock.seconds(), "0.0");
    visible = true;
    clock.resume();
    t += 2 * 86400 * 1000;
    assert.equal(clock.seconds(), "86400.0");
  });
});
