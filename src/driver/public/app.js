// The driver's app (issue 38). Everything it shows comes from the API with the driver's own token and
// goes into the page as text (textContent, attributes), never as markup. Every action is queued on the
// phone first (store.js) and sent in order, each with its Idempotency-Key, whenever there is network.
import { session, routesCopy, queuedCopy, queue, conflicts } from './store.js'
import { setLanguage, language, t, translatePage } from './i18n.js'

const $ = (id) => document.getElementById(id)
const OPEN = new Set(['pending', 'started', 'arrived'])
const TARGET = { start: 'started', arrive: 'arrived', complete: 'complete', fail: 'failed' }
const REASONS = ['no_answer', 'bad_address', 'rejected', 'damaged', 'closed', 'other']
const POSITIONS_EVERY_MS = 5000

const S = {
  session: null,
  routes: [], // [{ route, tasks }], tasks in route order
  syncedAt: null,
  queued: [], // the queue's items, oldest first
  conflicts: [],
  others: new Map(), // a dependency on no route of ours: ulid → status (or null: not visible)
  form: null, // { ulid, kind, node, state }: the one open proof form, kept across renders
  expanded: new Set(),
  sharing: 'off',
}

class SignedOut extends Error {}

// ---------- small DOM helpers

function el(tag, attrs, ...children) {
  const n = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue
    if (k === 'class') n.className = v
    else if (k === 'text') n.textContent = v
    else if (k.startsWith('on')) n.addEventListener(k.slice(2), v)
    else n.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children) if (c) n.append(c)
  return n
}

const tz = () => S.session?.organization?.timezone || undefined
function time(iso) {
  const d = new Date(iso)
  if (isNaN(d)) return ''
  try { return new Intl.DateTimeFormat(language(), { hour: '2-digit', minute: '2-digit', hour12: false, timeZone: tz() }).format(d) } catch { return d.toTimeString().slice(0, 5) }
}
function today() {
  try { return new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: tz() }).format(new Date()) } catch { return new Date().toISOString().slice(0, 10) }
}
const newKey = () => (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(16).slice(2)}`)

// ---------- the API

async function api(method, path, opts = {}) {
  const headers = { authorization: `Bearer ${S.session.access_token}`, accept: 'application/json' }
  if (opts.key) headers['idempotency-key'] = opts.key
  let body
  if (opts.form) body = opts.form
  else if (opts.body !== undefined) { headers['content-type'] = 'application/json'; body = JSON.stringify(opts.body) }
  const r = await fetch(`/api/v1${path}`, { method, headers, body, cache: 'no-store', signal: opts.signal })
  // A revoked token (the driver deactivated meanwhile): off the phone at once.
  if (r.status === 401) { signOut(true); throw new SignedOut() }
  return r
}

async function tasksOf(routeId) {
  const tasks = []
  let path = `/tasks?route_id=${routeId}&perPage=100`
  for (let guard = 0; path && guard < 50; guard++) {
    const r = await api('GET', path)
    if (!r.ok) throw new Error(`tasks ${r.status}`)
    const page = await r.json()
    tasks.push(...page.data)
    const next = page.links && page.links.next
    path = next ? new URL(next, location.href).href.replace(/^.*?\/api\/v1/, '') : null
  }
  return tasks.filter((x) => x.route_id === routeId).sort((a, b) => (a.position ?? 0) - (b.position ?? 0))
}

const routeFields = (r) => ({ id: r.id, name: r.name, shift_date: r.shift_date, status: r.status, blocked_reason: r.blocked_reason })

let syncing = null
function sync() {
  if (!syncing) syncing = doSync().finally(() => { syncing = null })
  return syncing
}
async function doSync() {
  if (!S.session) return
  setSync(t('syncing'))
  try {
    const r = await api('GET', `/routes?shift_date=${today()}&perPage=20`)
    if (!r.ok) throw new Error(`routes ${r.status}`)
    const list = (await r.json()).routes.data.filter((x) => x.status !== 'draft')
    const routes = []
    for (const route of list) routes.push({ route: routeFields(route), tasks: await tasksOf(route.id) })
    S.routes = routes
    S.syncedAt = new Date().toISOString()
    routesCopy.set({ user: S.session.user.id, routes, syncedAt: S.syncedAt })
    await resolveOthers()
    render()
    connectStreams()
  } catch (e) {
    if (e instanceof SignedOut) return
    render()
  }
}

async function syncRoute(routeId) {
  const entry = S.routes.find((x) => x.route.id === routeId)
  if (!entry) return sync()
  try {
    const r = await api('GET', `/routes/${routeId}`)
    if (r.status === 404) return sync()
    if (!r.ok) return
    entry.route = routeFields(await r.json())
    entry.tasks = await tasksOf(routeId)
    S.syncedAt = new Date().toISOString()
    routesCopy.set({ user: S.session.user.id, routes: S.routes, syncedAt: S.syncedAt })
    await resolveOthers()
    render()
  } catch { /* offline: the copy stays */ }
}

/** The status of dependencies that are on none of our routes (a 404: not ours to see). */
async function resolveOthers() {
  const ours = new Set(S.routes.flatMap((x) => x.tasks.map((k) => k.ulid)))
  for (const entry of S.routes) {
    for (const task of entry.tasks) {
      for (const dep of task.dependencies || []) {
        if (ours.has(dep) || (S.others.has(dep) && S.others.get(dep) === 'complete')) continue
        try {
          const r = await api('GET', `/tasks/${dep}`)
          S.others.set(dep, r.ok ? (await r.json()).status : null)
        } catch (e) { if (e instanceof SignedOut) throw e }
      }
    }
  }
}

// ---------- the state a stop shows: the server's, with what is still waiting to be sent on top

function effective(task) {
  const mine = S.queued.filter((q) => q.ulid === task.ulid)
  const last = mine[mine.length - 1]
  return { status: last ? TARGET[last.kind] : task.status, waiting: mine.length > 0 }
}

function statusOf(ulid) {
  for (const entry of S.routes) for (const task of entry.tasks) if (task.ulid === ulid) return effective(task).status
  return undefined
}

/** Why the stop cannot be taken up yet, or null. */
function waitsFor(task, entry) {
  const open = (task.dependencies || []).filter((d) => {
    const s = statusOf(d) ?? S.others.get(d)
    return s !== 'complete'
  })
  if (!open.length) return null
  const here = open.map((d) => entry.tasks.find((x) => x.ulid === d)).filter(Boolean)
  return here.length === open.length ? t('waitsFor', { list: here.map((x) => x.position).join(', ') }) : t('waitsForOther')
}

// ---------- rendering

function setSync(text) { $('sync').textContent = text }

function renderChips() {
  const online = navigator.onLine
  const net = $('net')
  net.textContent = online ? t('online') : t('offline')
  net.className = `chip ${online ? 'ok' : 'warn'}`
  const sharing = $('sharing')
  sharing.textContent = S.sharing === 'on' ? t('sharing') : S.sharing === 'denied' ? t('noLocation') : t('notSharing')
  sharing.className = `chip ${S.sharing === 'on' ? 'live' : S.sharing === 'denied' ? 'warn' : ''}`
  sharing.setAttribute('data-state', S.sharing)
}

function addressLine(a) {
  if (!a) return t('noAddress')
  const unit = [a.floor, a.apartment].filter(Boolean).join(' ')
  return [[a.street, a.street_number].filter(Boolean).join(' '), unit, [a.zipcode, a.city && a.city.name].filter(Boolean).join(' ')].filter(Boolean).join(', ')
}

function navLinks(task) {
  const a = task.address
  if (!a) return null
  const hasPoint = typeof a.geo_latitude === 'number' && typeof a.geo_longitude === 'number'
  const where = hasPoint ? `${a.geo_latitude},${a.geo_longitude}` : addressLine(a)
  const geo = hasPoint ? `geo:${where}?q=${where}(${encodeURIComponent(a.name || '')})` : `geo:0,0?q=${encodeURIComponent(where)}`
  const web = `https://www.google.com/maps/dir/?api=1&destination=${encodeURIComponent(where)}`
  const row = el('p', { class: 'links' },
    el('a', { class: 'button nav', href: geo, 'data-geo': where, text: t('navigate') }),
    el('a', { class: 'button ghost', href: web, target: '_blank', rel: 'noopener noreferrer', text: t('webMaps') }))
  if (a.phone) row.append(el('a', { class: 'button ghost', href: `tel:${a.phone}`, text: t('call', { phone: a.phone }) }))
  return row
}

function whenLine(task, status) {
  const parts = []
  if (task.time_windows && task.time_windows.length) parts.push(t('window', { w: task.time_windows.map((w) => `${time(w.from)}–${time(w.to)}`).join(', ') }))
  if (task.eta && OPEN.has(status)) parts.push(t('eta', { t: time(task.eta.at) }))
  return parts.join(' · ')
}

function badge(status, waiting) {
  const b = el('span', { class: `badge ${status}`, text: t(`status_${status}`) })
  const wrap = el('span', { class: 'badges' }, b)
  if (waiting) wrap.append(el('span', { class: 'badge waiting', text: t('waiting') }))
  return wrap
}

function actions(task, entry) {
  const { status } = effective(task)
  const box = el('div', { class: 'actions' })
  if (!OPEN.has(status)) { box.append(el('p', { class: 'note', text: t('closed') })); return box }
  if (S.form && S.form.ulid === task.ulid) { box.append(S.form.node); return box }
  const blocked = entry.route.status === 'blocked' ? t('blocked', { reason: entry.route.blocked_reason || '' }) : null
  const waits = status === 'pending' ? waitsFor(task, entry) : null
  const why = blocked || waits
  const noteId = `why-${task.ulid}`
  const button = (kind, cls) => el('button', {
    type: 'button', class: cls, 'data-action': kind, disabled: why ? true : null, 'aria-describedby': why ? noteId : null,
    onclick: () => (kind === 'complete' || kind === 'fail' ? openForm(task, kind) : act(task, entry, kind, {})),
    text: t(kind),
  })
  const row = el('div', { class: 'buttons' })
  if (status === 'pending') row.append(button('start', 'secondary'))
  if (status !== 'arrived') row.append(button('arrive', 'secondary'))
  row.append(button('complete', 'primary'), button('fail', 'danger'))
  box.append(row)
  if (why) box.append(el('p', { class: 'note why', id: noteId, text: why }))
  return box
}

function stopDetails(task, entry, withActions) {
  const { status } = effective(task)
  const frag = el('div', { class: 'details' },
    el('p', { class: 'addr', text: addressLine(task.address) }),
    whenLine(task, status) ? el('p', { class: 'when', text: whenLine(task, status) }) : null,
    task.notes ? el('p', { class: 'tnotes', text: task.notes }) : null,
    navLinks(task))
  if (withActions) frag.append(actions(task, entry))
  return frag
}

// Renders asked for in a burst (a queue draining, frames of the stream) are drawn once, at the next frame.
let drawPending = false
function render() {
  if (drawPending) return
  drawPending = true
  requestAnimationFrame(() => { drawPending = false; draw() })
}

function draw() {
  renderChips()
  const waiting = S.queued.length
  const copyNote = S.syncedAt ? (navigator.onLine ? t('synced', { time: time(S.syncedAt) }) : t('offlineCopy', { time: time(S.syncedAt) })) : ''
  setSync([copyNote, waiting ? t('waitingCount', { n: waiting }) : ''].filter(Boolean).join(' · '))
  renderConflicts()
  const host = $('routes')
  if (S.form) S.form.node.remove()
  host.replaceChildren()
  if (!S.routes.length) { host.append(el('p', { class: 'panel empty', text: S.syncedAt ? t('noRoutes') : t('syncing') })); return }
  for (const entry of S.routes) host.append(renderRoute(entry))
  // For the figures (test/bench/driver-app.bench.ts): when the route was first on the screen.
  if (!performance.getEntriesByName('driver:route-shown').length) performance.mark('driver:route-shown')
}

function renderRoute(entry) {
  const { route, tasks } = entry
  const done = tasks.filter((x) => !OPEN.has(effective(x).status)).length
  const section = el('section', { class: 'route', 'data-route': route.id, 'aria-labelledby': `route-${route.id}` })
  section.append(el('h1', { id: `route-${route.id}`, text: route.name || t('routeOf', { date: route.shift_date }) }),
    el('p', { class: 'meta' }, el('span', { class: `chip route-status ${route.status}`, text: t(`route_${route.status}`) }), el('span', { text: t('stopsDone', { done, total: tasks.length }) })))
  const next = tasks.find((x) => OPEN.has(effective(x).status))
  if (next) {
    const { status, waiting } = effective(next)
    section.append(el('article', { class: 'panel next', 'data-ulid': next.ulid, 'aria-labelledby': `next-${next.ulid}` },
      el('h2', { class: 'kicker', text: t('nextStop') }),
      el('div', { class: 'head' }, el('span', { class: 'num', text: String(next.position) }),
        el('h3', { id: `next-${next.ulid}`, class: 'recipient', text: next.address?.name || t(next.type) }), badge(status, waiting)),
      stopDetails(next, entry, true)))
  } else if (tasks.length) {
    section.append(el('p', { class: 'panel done', text: t('allDone') }))
  }
  const list = el('ol', { class: 'stops', 'aria-label': t('stops') })
  for (const task of tasks) {
    const { status, waiting } = effective(task)
    const isNext = task === next
    const li = el('li', { class: `stop ${status}${isNext ? ' is-next' : ''}`, 'data-ulid': task.ulid })
    const details = el('details', { open: S.expanded.has(task.ulid) ? true : null, ontoggle: (e) => { if (e.target.open) S.expanded.add(task.ulid); else S.expanded.delete(task.ulid) } })
    details.append(el('summary', {},
      el('span', { class: 'num', text: String(task.position) }),
      el('span', { class: 'who' }, el('span', { class: 'recipient', text: task.address?.name || t(task.type) }), el('span', { class: 'addr', text: addressLine(task.address) }),
        waiting ? el('span', { class: 'badge waiting', text: t('waiting') }) : null),
      badge(status, false)))
    details.append(stopDetails(task, entry, !isNext))
    li.append(details)
    list.append(li)
  }
  section.append(el('h2', { class: 'list-title', text: t('stops') }), list)
  return section
}

function renderConflicts() {
  const box = $('conflicts')
  const list = $('conflict-list')
  list.replaceChildren()
  box.hidden = S.conflicts.length === 0
  for (const c of S.conflicts) {
    list.append(el('li', { 'data-ulid': c.ulid, class: 'conflict' },
      el('span', { text: c.message }),
      el('button', { type: 'button', class: 'link', onclick: async () => { await conflicts.remove(c.seq); S.conflicts = await conflicts.all(); render() }, text: t('dismiss') })))
  }
}

// ---------- proof forms

function field(label, input, required, hint) {
  const id = input.id
  const wrap = el('div', { class: 'field' }, el('label', { for: id }, label, required ? el('span', { class: 'req', text: ` (${t('required')})` }) : null))
  if (hint) wrap.append(el('p', { class: 'hint', text: hint }))
  wrap.append(input)
  return wrap
}

function openForm(task, kind) {
  const required = (task.requirements && task.requirements[kind]) || []
  const needs = (r) => required.includes(r)
  const state = { ink: false, photo: null }
  const id = (k) => `${kind}-${k}-${task.ulid}`
  const form = el('form', { class: `proof ${kind}`, novalidate: true, 'data-kind': kind })
  const missing = el('p', { class: 'note why', id: id('missing'), 'aria-live': 'polite' })
  const submit = el('button', { type: 'submit', class: kind === 'complete' ? 'primary' : 'danger', 'aria-describedby': id('missing'), text: t(kind === 'complete' ? 'sendComplete' : 'sendFail') })

  let reason = null
  if (kind === 'fail') {
    reason = el('select', { id: id('reason'), name: 'reason' }, ...REASONS.map((r) => el('option', { value: r, text: t(`reason_${r}`) })))
    form.append(field(t('reason'), reason, true))
  }
  // The signature: drawn with a finger on the canvas, sent as a PNG attachment; the API asks for the signer's name.
  const canvas = el('canvas', { id: id('signature'), class: 'signature', width: 600, height: 220, 'aria-label': t('signHere'), role: 'img' })
  const ctx = canvas.getContext('2d')
  ctx.lineWidth = 4; ctx.lineCap = 'round'; ctx.lineJoin = 'round'; ctx.strokeStyle = '#10214a'
  let drawing = false
  const at = (e) => { const r = canvas.getBoundingClientRect(); return [(e.clientX - r.left) * canvas.width / r.width, (e.clientY - r.top) * canvas.height / r.height] }
  canvas.addEventListener('pointerdown', (e) => { drawing = true; canvas.setPointerCapture?.(e.pointerId); const [x, y] = at(e); ctx.beginPath(); ctx.moveTo(x, y) })
  canvas.addEventListener('pointermove', (e) => { if (!drawing) return; const [x, y] = at(e); ctx.lineTo(x, y); ctx.stroke(); if (!state.ink) { state.ink = true; check() } })
  const stop = () => { drawing = false }
  canvas.addEventListener('pointerup', stop); canvas.addEventListener('pointercancel', stop); canvas.addEventListener('pointerleave', stop)
  const clear = el('button', { type: 'button', class: 'link', onclick: () => { ctx.clearRect(0, 0, canvas.width, canvas.height); state.ink = false; check() }, text: t('clearSignature') })
  const signedBy = el('input', { id: id('signed-by'), name: 'signed_by', autocomplete: 'off', maxlength: 100 })
  const sigBox = el('div', { class: 'field' }, el('span', { class: 'label', id: id('sig-label') }, t('signature'), needs('signature') ? el('span', { class: 'req', text: ` (${t('required')})` }) : null), canvas, clear)
  // What the task requires is in the form; the rest of the proof is one tap away, out of the thumb's way.
  const more = el('details', { class: 'more' }, el('summary', { text: t('moreProof') }))
  const place = (required, ...nodes) => (required ? form : more).append(...nodes)
  place(needs('signature'), sigBox, field(t('signedBy'), signedBy, needs('signature')))

  const photo = el('input', { id: id('photo'), name: 'photo', type: 'file', accept: 'image/*', capture: 'environment' })
  const preview = el('img', { class: 'preview', alt: '', hidden: true })
  photo.addEventListener('change', () => {
    state.photo = photo.files && photo.files[0] ? photo.files[0] : null
    if (state.photo) { preview.src = URL.createObjectURL(state.photo); preview.hidden = false; preview.alt = t('photo') } else preview.hidden = true
    check()
  })
  place(needs('photo'), field(t('photo'), photo, needs('photo')), preview)

  const barcode = el('input', { id: id('barcode'), name: 'barcode', autocomplete: 'off', maxlength: 64, inputmode: 'text' })
  const bField = field(t('barcode'), barcode, needs('barcode_scan'))
  if ('BarcodeDetector' in window) {
    // The browser reads the code from a picture of the label; where it cannot, it is typed.
    const shot = el('input', { type: 'file', accept: 'image/*', capture: 'environment', hidden: true, id: id('scan-shot'), 'aria-label': t('scan') })
    shot.addEventListener('change', async () => {
      try {
        const bitmap = await createImageBitmap(shot.files[0])
        const found = await new window.BarcodeDetector().detect(bitmap)
        if (found.length) { barcode.value = found[0].rawValue; check() } else missing.textContent = t('scanFailed')
      } catch { missing.textContent = t('scanFailed') }
    })
    bField.append(shot, el('button', { type: 'button', class: 'secondary small', onclick: () => shot.click(), text: t('scan') }))
  }
  place(needs('barcode_scan'), bField)
  const notes = el('textarea', { id: id('notes'), name: 'notes', rows: 2, maxlength: 1000 })
  form.append(field(t('notes'), notes, needs('notes')))
  if (more.childElementCount > 1) form.append(more)
  for (const input of [signedBy, barcode, notes]) input.addEventListener('input', () => check())

  const lacking = () => {
    const out = []
    if (needs('signature') && (!state.ink || !signedBy.value.trim())) out.push(t('req_signature'))
    if (needs('photo') && !state.photo) out.push(t('req_photo'))
    if (needs('barcode_scan') && !barcode.value.trim()) out.push(t('req_barcode_scan'))
    if (needs('notes') && !notes.value.trim()) out.push(t('req_notes'))
    return out
  }
  function check() {
    const l = lacking()
    submit.disabled = l.length > 0
    missing.textContent = l.length ? t('needs', { list: l.join(', ') }) : ''
  }
  form.append(missing, el('div', { class: 'buttons' }, submit, el('button', { type: 'button', class: 'secondary', onclick: closeForm, text: t('cancel') })))
  form.addEventListener('submit', async (e) => {
    e.preventDefault()
    if (lacking().length) return
    submit.disabled = true
    const files = []
    if (state.ink) files.push({ blob: await new Promise((res) => canvas.toBlob(res, 'image/png')), name: 'signature.png', description: 'signature' })
    if (state.photo) files.push({ blob: state.photo, name: state.photo.name || 'photo.jpg', description: 'photo' })
    const body = {}
    if (reason) body.reason = reason.value
    if (signedBy.value.trim()) body.signed_by = signedBy.value.trim()
    if (barcode.value.trim()) body.barcode = barcode.value.trim()
    if (notes.value.trim()) body.notes = notes.value.trim()
    const entry = S.routes.find((x) => x.tasks.includes(task))
    closeForm()
    await act(task, entry, kind, body, files)
  })
  S.form = { ulid: task.ulid, kind, node: el('div', { class: 'form-wrap' }, form) }
  check()
  draw()
  ;(reason || signedBy).focus()
}

function closeForm() {
  if (S.form) S.form.node.remove()
  S.form = null
  render()
}

// ---------- the queue

/** The queue as the page shows it; its ulids and kinds also in localStorage, read synchronously at the next opening. */
function setQueued(items) {
  S.queued = items
  queuedCopy.set(items.map((q) => ({ ulid: q.ulid, kind: q.kind })))
}

async function act(task, entry, kind, body, files = []) {
  await queue.add({ key: newKey(), kind, ulid: task.ulid, routeId: entry ? entry.route.id : null, position: task.position, body, files, uploaded: [], at: new Date().toISOString() })
  setQueued(await queue.all())
  render()
  updateSharing()
  flush()
}

let flushing = false
let retryTimer = null
async function flush() {
  if (flushing || !S.session) return
  flushing = true
  try {
    // The queue is read once a round; actions queued meanwhile are read by the next round, after these.
    round: for (let items = await queue.all(); items.length; items = await queue.all()) {
      for (const item of items) {
        const outcome = await send(item)
        if (outcome === 'retry') { retryLater(); break round }
        retryMs = 500
        await queue.remove(item.seq)
        setQueued(S.queued.filter((q) => q.seq !== item.seq))
        if (outcome.conflict) {
          await conflicts.add({ ulid: item.ulid, kind: item.kind, message: outcome.conflict, at: new Date().toISOString() })
          S.conflicts = await conflicts.all()
        }
        if (outcome.task) applyTask(outcome.task)
        render()
      }
    }
  } finally {
    flushing = false
    setQueued(await queue.all())
    render()
    updateSharing()
  }
}
// Tried again soon after a failure, then less and less often (the network just back may not carry
// the first request yet; a dead zone may last): 0.5 s doubling up to 15 s, from 0.5 s again once one gets through.
let retryMs = 500
function retryLater() {
  clearTimeout(retryTimer)
  retryTimer = setTimeout(flush, retryMs)
  retryMs = Math.min(15_000, retryMs * 2)
}

/** One queued action: its files first (each under its own key), then the transition under the action's key. */
async function send(item) {
  try {
    const ids = item.uploaded || []
    for (let i = ids.length; i < (item.files || []).length; i++) {
      const f = item.files[i]
      const form = new FormData()
      form.append('description', f.description)
      form.append('file', f.blob, f.name)
      const r = await api('POST', `/tasks/${item.ulid}/attachments`, { form, key: `${item.key}-file-${i}` })
      if (!r.ok) return refusal(r, item)
      ids.push((await r.json()).attachment.id)
      item.uploaded = ids
      await queue.put(item)
    }
    const body = item.kind === 'complete' || item.kind === 'fail' ? { ...item.body, ...(ids.length ? { attachment_ids: ids } : {}) } : undefined
    const r = await api('POST', `/tasks/${item.ulid}/${item.kind}`, { body, key: item.key })
    if (r.ok) return { task: (await r.json()).task }
    return refusal(r, item)
  } catch {
    return 'retry' // no network (or signed out: the queue waits for the driver to sign in again)
  }
}

/** A refusal that waiting will not change is a conflict the driver sees; the rest is tried again. */
async function refusal(r, item) {
  let body = {}
  try { body = await r.json() } catch { /* not JSON */ }
  if (r.status >= 500 || r.status === 429 || r.status === 408 || body.code === 'rate_limited') return 'retry'
  const stop = item.position ?? '?'
  const action = t(item.kind)
  if (r.status === 404) return { conflict: t('conflictRemoved', { stop, action }) }
  return { conflict: t('conflictRefused', { stop, action, message: body.message || String(r.status) }) }
}

let copyTimer = null
function applyTask(task) {
  for (const entry of S.routes) {
    const i = entry.tasks.findIndex((x) => x.ulid === task.ulid)
    if (i >= 0) entry.tasks[i] = task
  }
  // The copy is the whole route as JSON: written once a burst of answers is over.
  clearTimeout(copyTimer)
  copyTimer = setTimeout(() => { if (S.session) routesCopy.set({ user: S.session.user.id, routes: S.routes, syncedAt: S.syncedAt }) }, 500)
}

// ---------- live updates: the route's progress stream (server-sent events over fetch, for the Authorization header)

const streams = new Map()
function connectStreams() {
  const wanted = new Set(S.routes.filter((x) => x.route.status !== 'finished').map((x) => x.route.id))
  for (const [id, ctl] of streams) if (!wanted.has(id)) { ctl.abort(); streams.delete(id) }
  for (const id of wanted) if (!streams.has(id)) openStream(id)
}
function closeStreams() { for (const ctl of streams.values()) ctl.abort(); streams.clear() }

async function openStream(routeId) {
  const ctl = new AbortController()
  streams.set(routeId, ctl)
  let lastId = null
  while (!ctl.signal.aborted && S.session) {
    try {
      const headers = { authorization: `Bearer ${S.session.access_token}`, accept: 'text/event-stream' }
      if (lastId) headers['last-event-id'] = lastId
      const r = await fetch(`/api/v1/routes/${routeId}/progress/stream`, { headers, signal: ctl.signal, cache: 'no-store' })
      if (r.status === 401) { signOut(true); return }
      if (r.status === 404) { streams.delete(routeId); sync(); return }
      if (!r.ok || !r.body) throw new Error(String(r.status))
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader()
      let buf = ''
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buf = (buf + value).replace(/\r\n?/g, '\n')
        let cut
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const frame = {}
          for (const line of buf.slice(0, cut).split('\n')) {
            const m = /^(\w+): ?(.*)$/.exec(line)
            if (m) frame[m[1]] = frame[m[1]] && m[1] === 'data' ? `${frame[m[1]]}\n${m[2]}` : m[2]
          }
          buf = buf.slice(cut + 2)
          if (frame.id) lastId = frame.id
          if (frame.event) onFrame(routeId, frame.event, frame.data)
        }
      }
    } catch { if (ctl.signal.aborted) return }
    await new Promise((res) => setTimeout(res, 3000))
  }
}

function onFrame(routeId, name, raw) {
  let d = {}
  try { d = JSON.parse(raw || '{}') } catch { return }
  const entry = S.routes.find((x) => x.route.id === routeId)
  if (!entry) return
  if (name === 'task.added' || name === 'task.removed' || name === 'tasks.reordered' || name === 'route.updated') return void syncRoute(routeId)
  if (name === 'snapshot') {
    // Stops added or moved while the stream was away: read again.
    const order = (d.tasks || []).map((x) => x.ulid).join()
    if (order !== entry.tasks.map((x) => x.ulid).join()) return void syncRoute(routeId)
    for (const s of d.tasks || []) { const task = entry.tasks.find((x) => x.ulid === s.ulid); if (task) { task.status = s.status; task.eta = s.eta } }
    entry.route.status = d.status
    entry.route.blocked_reason = d.blocked_reason
  } else if (name.startsWith('task.')) {
    const task = entry.tasks.find((x) => x.ulid === d.task_ulid)
    if (!task) return void syncRoute(routeId)
    if (name === 'task.eta') task.eta = d.eta || null
    else task.status = String(d.status)
  } else if (name.startsWith('route.')) {
    entry.route.status = String(d.status)
    entry.route.blocked_reason = d.blocked_reason ?? null
  }
  render()
  updateSharing()
}

// ---------- positions: while a route is under way, batched to /drivers/me/positions

let watchId = null
let batch = []
let batchTimer = null
function underWay() {
  return S.routes.some((x) => x.route.status === 'started' ||
    ((x.route.status === 'published' || x.route.status === 'blocked') && x.tasks.some((k) => effective(k).status !== 'pending')))
    && S.routes.some((x) => x.tasks.some((k) => OPEN.has(effective(k).status)))
}
function updateSharing() {
  const want = Boolean(S.session) && underWay() && 'geolocation' in navigator
  if (want && watchId === null && S.sharing !== 'denied') {
    S.sharing = 'on'
    watchId = navigator.geolocation.watchPosition(onPosition, (err) => {
      if (err.code === 1) { S.sharing = 'denied'; stopWatching(); renderChips() }
    }, { enableHighAccuracy: true, maximumAge: 5000, timeout: 60_000 })
  } else if (!want && watchId !== null) {
    stopWatching()
    S.sharing = 'off'
    sendPositions()
  }
  renderChips()
}
function stopWatching() { if (watchId !== null) navigator.geolocation.clearWatch(watchId); watchId = null }
function onPosition(p) {
  const c = p.coords
  batch.push({
    lat: c.latitude, lng: c.longitude, recorded_at: new Date(p.timestamp || Date.now()).toISOString(),
    accuracy_m: Number.isFinite(c.accuracy) ? c.accuracy : null,
    speed_kmh: Number.isFinite(c.speed) && c.speed !== null ? c.speed * 3.6 : null,
    heading: Number.isFinite(c.heading) && c.heading !== null ? c.heading : null,
  })
  if (batch.length > 500) batch = batch.slice(-500)
  if (!batchTimer) batchTimer = setTimeout(sendPositions, batch.length === 1 && !sentOnce ? 0 : POSITIONS_EVERY_MS)
}
let sentOnce = false
async function sendPositions() {
  clearTimeout(batchTimer)
  batchTimer = null
  if (!batch.length || !S.session) return
  // The server keeps a day of them; older ones would only be refused.
  const dayAgo = Date.now() - 23 * 3600_000
  const out = batch.filter((p) => Date.parse(p.recorded_at) > dayAgo).slice(0, 100)
  batch = batch.slice(out.length ? batch.indexOf(out[out.length - 1]) + 1 : batch.length)
  if (!out.length) return
  try {
    const r = await api('POST', '/drivers/me/positions', { body: { positions: out } })
    if (r.status >= 500 || r.status === 409) batch = out.concat(batch)
    else sentOnce = true
  } catch (e) {
    if (!(e instanceof SignedOut)) batch = out.concat(batch)
  }
  if (batch.length && !batchTimer) batchTimer = setTimeout(sendPositions, POSITIONS_EVERY_MS)
}

// ---------- signing in and out

function showSignIn(message) {
  $('app').hidden = true
  $('signin').hidden = false
  $('signin-error').textContent = message || ''
  $('org-name').textContent = ''
  $('driver-name').textContent = ''
  renderChips()
}

function signOut(revoked) {
  closeStreams()
  stopWatching()
  S.sharing = 'off'
  session.clear()
  S.session = null
  S.routes = []
  showSignIn(revoked ? t('signedOut') : '')
}

async function redeem(code) {
  $('signin-error').textContent = t('signingIn')
  try {
    const r = await fetch('/driver/sign-in', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ code }), cache: 'no-store' })
    if (!r.ok) { showSignIn(t('signInFailed')); return false }
    session.set(await r.json())
    return true
  } catch {
    showSignIn(t('signInOffline'))
    return false
  }
}

async function start() {
  S.session = session.get()
  setLanguage(S.session.organization.locale)
  translatePage()
  $('signin').hidden = true
  $('app').hidden = false
  $('org-name').textContent = S.session.organization.name
  $('driver-name').textContent = S.session.user.name
  const copy = routesCopy.get()
  if (copy && copy.user === S.session.user.id) { S.routes = copy.routes; S.syncedAt = copy.syncedAt }
  // The route as last seen, with what waits to be sent, before anything slower (IndexedDB, the network).
  S.queued = queuedCopy.get()
  draw()
  setQueued(await queue.all())
  S.conflicts = await conflicts.all()
  render()
  updateSharing()
  await sync()
  updateSharing()
  flush()
}

async function boot() {
  const saved = session.get()
  setLanguage(saved?.organization?.locale || navigator.language)
  translatePage()
  renderChips()
  if ('serviceWorker' in navigator) navigator.serviceWorker.register('/driver/sw.js', { scope: '/driver' }).catch(() => undefined)
  $('signin-form').addEventListener('submit', async (e) => {
    e.preventDefault()
    const code = $('code').value.trim()
    if (code && await redeem(code)) { $('code').value = ''; start() }
  })
  $('signout').addEventListener('click', () => signOut(false))
  window.addEventListener('online', () => { retryMs = 500; renderChips(); flush(); sync(); sendPositions() })
  window.addEventListener('offline', () => render())
  // The link's code is in the fragment, which no server or log sees; it leaves the address bar and the history at once.
  const m = /(?:^#|&)code=([^&]+)/.exec(location.hash)
  if (m) {
    history.replaceState(null, '', location.pathname)
    if (await redeem(decodeURIComponent(m[1]))) return start()
    return
  }
  if (!saved) return showSignIn()
  start()
}

boot()
