// The driver's app opens without network: its files are kept in a cache named by the server's
// version of them (the server writes it below), answered from there first and refreshed behind.
// The API is never cached here: the app keeps its own copy of the route and queues its actions.
const CACHE = 'driver-app-__VERSION__'
const SHELL = ['/driver', '/driver/app.css', '/driver/app.js', '/driver/store.js', '/driver/i18n.js', '/driver/manifest.webmanifest', '/driver/icon.svg', '/driver/icon-192.png', '/driver/icon-512.png']

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()))
})

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((n) => n.startsWith('driver-app-') && n !== CACHE).map((n) => caches.delete(n))))
    .then(() => self.clients.claim()))
})

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url)
  if (event.request.method !== 'GET' || url.origin !== location.origin) return
  // The page under any fragment or query is the one page.
  const key = url.pathname === '/driver' || url.pathname === '/driver/' ? '/driver' : url.pathname
  if (!SHELL.includes(key)) return
  event.respondWith(caches.open(CACHE).then(async (cache) => {
    const kept = await cache.match(key)
    const fresh = fetch(event.request).then((r) => { if (r.ok) cache.put(key, r.clone()); return r })
    if (kept) { fresh.catch(() => undefined); return kept }
    return fresh
  }))
})
