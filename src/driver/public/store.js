// What the phone keeps: the session and the last copy of the routes (localStorage), and the queue of
// actions not yet sent, with their photos and signatures (IndexedDB: blobs, and it outlives a reload).

const SESSION = 'driver.session'
const ROUTES = 'driver.routes'
const QUEUED = 'driver.queued'

export const session = {
  get() { try { return JSON.parse(localStorage.getItem(SESSION) || 'null') } catch { return null } },
  set(s) { localStorage.setItem(SESSION, JSON.stringify(s)) },
  clear() { localStorage.removeItem(SESSION); localStorage.removeItem(ROUTES) },
}

export const routesCopy = {
  get() { try { return JSON.parse(localStorage.getItem(ROUTES) || 'null') } catch { return null } },
  set(copy) { try { localStorage.setItem(ROUTES, JSON.stringify(copy)) } catch { /* full: the live copy still works */ } },
}

/** What waits in the queue (ulid and kind of each, no files): the first render's, before IndexedDB answers. */
export const queuedCopy = {
  get() { try { return JSON.parse(localStorage.getItem(QUEUED) || '[]') } catch { return [] } },
  set(items) { try { localStorage.setItem(QUEUED, JSON.stringify(items)) } catch { /* full: IndexedDB still has it */ } },
}

let opened = null
function db() {
  if (!opened) {
    opened = new Promise((resolve, reject) => {
      const req = indexedDB.open('driver-app', 1)
      req.onupgradeneeded = () => {
        const d = req.result
        d.createObjectStore('queue', { keyPath: 'seq', autoIncrement: true })
        d.createObjectStore('conflicts', { keyPath: 'seq', autoIncrement: true })
      }
      req.onsuccess = () => resolve(req.result)
      req.onerror = () => reject(req.error)
    })
  }
  return opened
}

async function run(store, mode, fn) {
  const d = await db()
  return new Promise((resolve, reject) => {
    const tx = d.transaction(store, mode)
    const s = tx.objectStore(store)
    let result
    Promise.resolve(fn(s)).then((r) => { result = r })
    tx.oncomplete = () => resolve(result)
    tx.onerror = () => reject(tx.error)
    tx.onabort = () => reject(tx.error)
  })
}

const all = (store) => run(store, 'readonly', (s) => new Promise((resolve) => { const r = s.getAll(); r.onsuccess = () => resolve(r.result) }))

/** The queue, oldest first (`seq` grows): the order the driver acted in. */
export const queue = {
  all: () => all('queue'),
  add: (item) => run('queue', 'readwrite', (s) => new Promise((resolve) => { const r = s.add(item); r.onsuccess = () => resolve(r.result) })),
  put: (item) => run('queue', 'readwrite', (s) => { s.put(item) }),
  remove: (seq) => run('queue', 'readwrite', (s) => { s.delete(seq) }),
}

export const conflicts = {
  all: () => all('conflicts'),
  add: (item) => run('conflicts', 'readwrite', (s) => { s.add(item) }),
  remove: (seq) => run('conflicts', 'readwrite', (s) => { s.delete(seq) }),
}
