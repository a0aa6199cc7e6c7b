// The lab's service worker (the build prepends `const PRECACHE = { version, files }`, scripts/offline-plugin.ts):
// on install it keeps the page, its code, the engine worker and the shipped warm starts in a cache named by the
// build; afterwards every request of the site is answered from that cache when the network cannot answer, so a
// lab opened once loads and trains offline. Pages go network first (a new build is seen when online); files with
// a build hash and warm starts go cache first. Other origins are never touched.
/* global PRECACHE */
/// <reference lib="webworker" />

const CACHE = `rl-lab-${PRECACHE.version}`;
const scope = new URL(self.registration.scope);
const kept = new Set(PRECACHE.files.map((f) => new URL(f, scope).href));

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll([...kept]))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) =>
        Promise.all(keys.filter((k) => k.startsWith('rl-lab-') && k !== CACHE).map((k) => caches.delete(k))),
      )
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== scope.origin || !url.href.startsWith(scope.href)) return;
  if (request.mode === 'navigate') {
    // The page: the network's newest, else the kept copy (the query string carries the config, not another page).
    // A server that refuses an address as too long (414, 431: a hand-made link with a long prompt list) gets the
    // kept copy too; the page then reads the link and writes a short address (src/store/link-state.ts).
    const keptPage = () => caches.match(scope.href, { cacheName: CACHE });
    event.respondWith(
      fetch(request).then(
        (r) => (r.status === 414 || r.status === 431 ? keptPage().then((k) => k ?? r) : r),
        () => keptPage().then((r) => r ?? Response.error()),
      ),
    );
    return;
  }
  const key = url.origin + url.pathname;
  if (!kept.has(key)) return;
  event.respondWith(caches.match(key, { cacheName: CACHE }).then((hit) => hit ?? fetch(request)));
});
