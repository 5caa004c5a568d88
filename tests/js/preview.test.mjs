import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { install, PREVIEW_ID, swapsRefusal } from "../../static/js/judges/preview.js";

function fakeRoot() {
  const handlers = {};
  return {
    handlers,
    addEventListener(name, handler) { handlers[name] = handler; },
  };
}

function beforeSwap(root, status, id) {
  const detail = { xhr: { status }, target: { id }, shouldSwap: status < 400, isError: status >= 400 };
  root.handlers["htmx:beforeSwap"]({ detail });
  return detail;
}

describe("the prompt preview shows its refusals", () => {
  test("a 4xx answer is swapped into the preview box only", () => {
    assert.equal(swapsRefusal(400, PREVIEW_ID), true);
    assert.equal(swapsRefusal(404, PREVIEW_ID), true);
    assert.equal(swapsRefusal(500, PREVIEW_ID), false);
    assert.equal(swapsRefusal(200, PREVIEW_ID), false);
    assert.equal(swapsRefusal(400, "planner-out"), false);
    assert.equal(swapsRefusal(400, undefined), false);
  });
  test("install turns htmx's swap on for those answers and leaves the rest alone", () => {
    const root = fakeRoot();
    install(root);
    assert.deepEqual(beforeSwap(root, 400, PREVIEW_ID), { xhr: { status: 400 }, target: { id: PREVIEW_ID }, shouldSwap: true, isError: false });
    assert.deepEqual(beforeSwap(root, 400, "elsewhere"), { xhr: { status: 400 }, target: { id: "elsewhere" }, shouldSwap: false, isError: true });
    assert.deepEqual(beforeSwap(root, 503, PREVIEW_ID), { xhr: { status: 503 }, target: { id: PREVIEW_ID }, shouldSwap: false, isError: true });
  });
});
