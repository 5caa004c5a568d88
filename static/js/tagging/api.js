/* The page's requests: same-origin, JSON in and out, Django's CSRF token on writes. The token is the one
 * base.html puts in <body hx-headers>, which htmx sends too. `fetchImpl` is there for the tests. */

export function csrfToken(body) {
  try {
    return JSON.parse((body && body.getAttribute("hx-headers")) || "{}")["X-CSRFToken"] || "";
  } catch (e) {
    return "";
  }
}

export function createApi({ fetchImpl = (...args) => globalThis.fetch(...args), token = () => "" } = {}) {
  return {
    /* A write: resolves to the Response whatever its status, rejects only when the network failed. */
    patchJSON(url, body) {
      return fetchImpl(url, {
        method: "PATCH", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": token(), "Accept": "application/json" },
        body: JSON.stringify(body),
      });
    },
    /* A read of a JSON resource. */
    getJSON(url) {
      return fetchImpl(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
    },
    /* A server-rendered fragment, asked for as htmx would. */
    getHTML(url) {
      return fetchImpl(url, { credentials: "same-origin", headers: { "HX-Request": "true" } });
    },
  };
}
