/* Active time on one item: runs while the tab is visible and focused, pauses otherwise. The time and the
 * visibility are passed in, so the arithmetic can be tested without a browser. */

export const MAX_SECONDS = 86400;  // the server takes at most a day of active time on one item

export function createItemClock({ now = () => Date.now(), visible = () => true } = {}) {
  let activeMs = 0;
  let since = null;
  function pause() { if (since !== null) { activeMs += now() - since; since = null; } }
  function resume() { if (since === null && visible()) { since = now(); } }
  return {
    /* A new item is shown: count from zero. */
    start() { activeMs = 0; since = visible() ? now() : null; },
    pause,
    resume,
    /* The seconds so far as the form sends them; a tab left open longer than a day reports a day. */
    seconds() { pause(); resume(); return Math.min(activeMs / 1000, MAX_SECONDS).toFixed(1); },
  };
}
