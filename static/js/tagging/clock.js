/* Active time on a question: counted in one-second ticks while the tab is visible and there was input in
 * the last 30 s. createActiveClock is the arithmetic (time and visibility passed in); startActiveClock
 * hangs it on the window. */

export const IDLE_MS = 30000;       // no input for this long: the expert is away, the clock stops
export const MAX_STEP_MS = 2000;    // a suspended laptop does not count
export const INPUT_EVENTS = ["keydown", "mousedown", "mousemove", "wheel", "touchstart", "input", "scroll"];

export function createActiveClock({ now = () => Date.now(), visible = () => true } = {}) {
  let seconds = 0;
  let lastInput = now();
  let lastTick = now();
  return {
    touch() { lastInput = now(); },
    tick() {
      const t = now();
      const step = Math.min(t - lastTick, MAX_STEP_MS) / 1000;
      lastTick = t;
      if (visible() && t - lastInput < IDLE_MS) seconds += step;
    },
    /* The tab came back (or went away): the time in between is not a tick's step. */
    resync() { lastTick = now(); },
    pending: () => Math.round(seconds * 10) / 10,
    consume(s) { seconds = Math.max(0, seconds - s); },
  };
}

export function startActiveClock(win, doc) {
  const clock = createActiveClock({ visible: () => doc.visibilityState === "visible" });
  INPUT_EVENTS.forEach((t) => win.addEventListener(t, clock.touch, { passive: true, capture: true }));
  win.setInterval(clock.tick, 1000);
  doc.addEventListener("visibilitychange", clock.resync);
  return { pending: clock.pending, consume: clock.consume };
}
