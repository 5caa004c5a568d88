/* Shared by the tests of static/js: a response as fetch gives it, a promise settled from outside, and a
 * fake of the working-copy endpoint that keeps revisions and client keys as the server does. */

export function response(status, body = {}) {
  return { ok: status >= 200 && status < 300, status, json: async () => body, text: async () => String(body) };
}

export function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

/* Lets every pending promise callback run. */
export const settle = () => new Promise((resolve) => setImmediate(resolve));

/* The PATCH endpoint of one working example: a save names its base revision (stale: 409) and a client key
 * (seen before: the stored result again, replayed). */
export function fakeServer(record = {}, revision = 0) {
  const server = { record: { ...record }, revision, keys: new Map(), bodies: [] };
  server.apply = (body) => {
    server.bodies.push(structuredClone(body));
    if (server.keys.has(body.client_key)) return response(200, { ...server.keys.get(body.client_key), replayed: true, revision: server.revision, record: { ...server.record } });
    if (body.base_revision !== server.revision) return response(409, { error: `revision ${server.revision} is by ola` });
    server.record = { ...server.record, ...body.changes };
    server.revision += 1;
    const result = { record: { ...server.record }, revision: server.revision };
    server.keys.set(body.client_key, result);
    return response(200, result);
  };
  /* Another expert saves on top. */
  server.otherSaves = (changes) => { server.record = { ...server.record, ...changes }; server.revision += 1; };
  return server;
}
