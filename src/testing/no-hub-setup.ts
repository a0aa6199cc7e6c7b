// A Vitest setup file of every project: no test reaches a real hub. vite.config.ts points HF_ENDPOINT at
// TEST_HUB_ENDPOINT (src/testing/test-hub.ts, a closed port on this machine), so a hub id given without an endpoint fails at once naming
// that host, here and in the CLI processes tests start; a test that wants a hub starts the mock hub
// (src/testing/mock-hub.ts) and passes its endpoint. And should a test drop HF_ENDPOINT and fall back to the
// default hub, fetch itself refuses every host but this machine's, naming it.

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The host `input` names when it is an http(s) URL off this machine, else null (fetch rejects the rest itself). */
function hostOffThisMachine(input: RequestInfo | URL): string | null {
  const href = input instanceof Request ? input.url : String(input);
  if (!URL.canParse(href)) return null;
  const url = new URL(href);
  return /^https?:$/.test(url.protocol) && !LOOPBACK.has(url.hostname) ? url.host : null;
}

const machineFetch = globalThis.fetch;
if (machineFetch) {
  globalThis.fetch = (input, init) => {
    const host = hostOffThisMachine(input);
    if (host === null) return machineFetch(input, init);
    // Shaped as Node's fetch fails (a TypeError with a cause), so the hub client names the host as for offline.
    return Promise.reject(
      new TypeError('fetch failed', { cause: { code: `tests reach only this machine, not ${host}` } }),
    );
  };
}
