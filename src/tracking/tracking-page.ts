import { createHash } from 'node:crypto'
import { PAGE_STRINGS } from './page-strings.js'
import type { TrackingLocale } from './locale.js'

// The public tracking page (DESIGN §3.10): static HTML per language, no build step, no framework,
// no outside request. Its data comes from `<this address>/stream` (server-sent events); everything
// from it goes into the page as text (textContent) or as SVG attributes, never as markup.

const STYLE = `
*{box-sizing:border-box}
body{font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1b1b1b;background:#f4f5f7}
main{max-width:34rem;margin:0 auto;padding:1rem}
.card{background:#fff;border-radius:12px;padding:1rem 1.1rem;margin:0 0 1rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
.carrier{margin:0;color:#4a4a4a;font-size:.95rem}
h1{font-size:1.6rem;margin:.2rem 0 0;display:flex;align-items:center;gap:.5rem}
h1 .dot{width:.8rem;height:.8rem;border-radius:50%;flex:none;background:#9e9e9e}
h2{font-size:1.05rem;margin:0 0 .5rem}
.eta{font-size:1.4rem;font-weight:700;margin:.1rem 0 .4rem}
p{margin:.3rem 0}
ol{list-style:none;margin:0;padding:0}
li{display:flex;justify-content:space-between;gap:.75rem;padding:.45rem 0;border-top:1px solid #e4e4e4}
li:first-child{border-top:0}
li .when{color:#4a4a4a;white-space:nowrap;font-size:.9rem}
li .detail{display:block;color:#4a4a4a;font-size:.9rem}
svg{width:100%;height:auto;display:block;border-radius:8px;background:#e8eef3}
figure{margin:.6rem 0 0}
figcaption{font-size:.9rem;color:#4a4a4a;margin-top:.3rem}
#state{color:#4a4a4a;font-size:.85rem;text-align:center}
[hidden]{display:none!important}
.ids{margin:.5rem 0 0;color:#4a4a4a;font-size:.9rem;display:flex;flex-wrap:wrap;gap:.2rem 1rem}
.ids b{color:#1b1b1b;font-weight:600}
.delayed-tag{display:inline-block;background:#b3261e;color:#fff;font-weight:700;font-size:.85rem;text-transform:uppercase;letter-spacing:.03em;border-radius:4px;padding:.1rem .45rem;margin-right:.4rem;vertical-align:2px}
.was{color:#4a4a4a;margin:0}
.was s{color:#4a4a4a}
.late-by{color:#8c1d18;font-weight:600}
.on-way{font-weight:600;color:#0b5b2a}
.zone{color:#4a4a4a;font-size:.85rem;text-align:center;margin:.2rem 0 0}
.proof img{max-width:100%;border-radius:8px;margin-top:.4rem;display:block}
`

const SCRIPT = `
(function () {
  var S = JSON.parse(document.getElementById('strings').textContent)
  var lang = document.documentElement.lang
  var el = function (id) { return document.getElementById(id) }
  var fill = function (t, k, v) { return t.replace('{' + k + '}', v) }
  var NS = 'http://www.w3.org/2000/svg'
  // Every time in the carrier's time zone (the view names it), whatever the phone's own.
  var zone = 'UTC'
  function fmt(iso, withDate) {
    var d = new Date(iso)
    var o = { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: zone }
    if (withDate) { o.weekday = 'short'; o.day = 'numeric'; o.month = 'short' }
    return new Intl.DateTimeFormat(lang, o).format(d)
  }
  function day(iso) { return new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: zone }).format(new Date(iso)) }
  var today = function (iso) { return day(iso) === day(new Date().toISOString()) }
  function dateOnly(iso) { return new Intl.DateTimeFormat(lang, { weekday: 'long', day: 'numeric', month: 'long', timeZone: zone }).format(new Date(iso)) }
  function span(a, b) { return fmt(a, !today(a)) + ' – ' + fmt(b, false) }
  function text(id, value) { var e = el(id); e.textContent = value || ''; e.hidden = !value }
  function svg(name, attrs, parent) {
    var e = document.createElementNS(NS, name)
    for (var k in attrs) e.setAttribute(k, String(attrs[k]))
    parent.appendChild(e)
    return e
  }
  function km(a, b) {
    var r = Math.PI / 180, dLat = (b.lat - a.lat) * r, dLng = (b.lng - a.lng) * r
    var h = Math.sin(dLat / 2) * Math.sin(dLat / 2) + Math.cos(a.lat * r) * Math.cos(b.lat * r) * Math.sin(dLng / 2) * Math.sin(dLng / 2)
    return 12742 * Math.asin(Math.sqrt(h))
  }
  var STEPS = [0.25, 0.5, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000]
  function drawMap(m) {
    var box = el('map')
    while (box.firstChild) box.removeChild(box.firstChild)
    // The delivery point at the centre, on a scale that fits the driver: kilometres east and north.
    var c = m.destination || m.driver
    var k = Math.cos(c.lat * Math.PI / 180)
    var off = function (p) { return { x: (p.lng - c.lng) * k * 111.32, y: (p.lat - c.lat) * 110.57 } }
    var dist = m.destination ? km(m.driver, m.destination) : 0
    var reach = STEPS.filter(function (s) { return s >= dist * 1.25 })[0] || STEPS[STEPS.length - 1]
    var scale = 85 / reach
    var at = function (p) { var o = off(p); return { x: 160 + o.x * scale, y: 100 - o.y * scale } }
    for (var i = 1; i < 8; i++) svg('line', { x1: i * 40, y1: 0, x2: i * 40, y2: 200, stroke: '#d3dde6', 'stroke-width': 1 }, box)
    for (var j = 1; j < 5; j++) svg('line', { x1: 0, y1: j * 40, x2: 320, y2: j * 40, stroke: '#d3dde6', 'stroke-width': 1 }, box)
    svg('circle', { cx: 160, cy: 100, r: 85, fill: 'none', stroke: '#b4c2cf', 'stroke-width': 1, 'stroke-dasharray': '3 4' }, box)
    var d = at(m.driver)
    if (m.destination) {
      svg('line', { x1: d.x, y1: d.y, x2: 160, y2: 100, stroke: '#5b6b7a', 'stroke-width': 2, 'stroke-dasharray': '6 5' }, box)
      svg('rect', { x: 151, y: 91, width: 18, height: 18, rx: 3, fill: '#2e7d32', stroke: '#fff', 'stroke-width': 2 }, box)
    }
    svg('circle', { cx: d.x, cy: d.y, r: 16, fill: '#1565c0', opacity: 0.18 }, box)
    svg('circle', { cx: d.x, cy: d.y, r: 8, fill: '#1565c0', stroke: '#fff', 'stroke-width': 2.5, id: 'driver-dot' }, box)
    var label = svg('text', { x: 314, y: 194, 'text-anchor': 'end', 'font-size': 11, fill: '#3d4a56' }, box)
    label.textContent = '\u25CC ' + reach + ' km'
    text('distance', !m.destination ? '' : dist < 0.1 ? S.nearby : fill(S.away, 'km', dist.toFixed(1)))
  }
  function render(v) {
    zone = v.time_zone || 'UTC'
    el('content').hidden = false
    text('carrier', fill(S.carrier, 'carrier', v.carrier))
    el('status').textContent = v.status.name
    el('dot').style.background = /^#[0-9A-Fa-f]{6}$/.test(v.status.color || '') ? v.status.color : '#9e9e9e'
    text('tracking-number', v.tracking_number)
    text('sender', fill(S.sender, 'sender', v.sender))
    text('zone', fill(S.zone, 'zone', zone))
    // Before the route starts: the planned window (the promise the delivery is measured against).
    var p = v.planned
    text('expected', p && !v.delivery && !v.final && !v.attempt && !v.proof
      ? fill(fill(fill(S.expected, 'day', today(p.from) ? S.today : fill(S.onDay, 'date', fmt(p.from, true).replace(/,? \d\d:\d\d$/, ''))), 'from', fmt(p.from, false)), 'to', fmt(p.to, false)) : '')
    var d = v.delivery
    el('delivery').hidden = !d
    if (d) {
      text('eta', d.eta ? span(d.eta.from, d.eta.to) : '')
      el('eta-label').hidden = !d.eta
      // The ETA moved past what was shown before: say so, and keep the earlier promise, struck through.
      el('delayed').hidden = !d.delayed
      el('was').hidden = !d.delayed
      if (d.delayed) {
        el('was-time').textContent = span(d.delayed.promised.from, d.delayed.promised.to)
        text('late-by', fill(S.lateBy, 'n', String(d.delayed.late_by_minutes)))
      } else text('late-by', '')
      text('stops', d.stops_before === 0 ? S.next : d.stops_before === 1 ? S.stop : fill(S.stops, 'n', String(d.stops_before)))
      text('on-way', d.stops_before === 0 ? S.onWay : '')
      text('driver', d.driver ? fill(S.driver, 'name', d.driver) : '')
      el('map-box').hidden = !d.map
      if (d.map) drawMap(d.map)
    }
    var a = v.attempt
    el('attempt').hidden = !a || !!v.delivery
    if (a) {
      text('attempt-reason', S['reason_' + a.reason] || S.reason_other)
      text('attempt-at', a.at ? fill(S.attemptAt, 'time', fmt(a.at, !today(a.at))) : '')
      text('attempt-next', a.next_step || fill(S.attemptDefault, 'sender', v.sender))
    }
    var pr = v.proof
    el('proof').hidden = !pr
    if (pr) {
      text('delivered-at', pr.at ? fill(S.deliveredAt, 'time', fmt(pr.at, !today(pr.at))) : '')
      text('signed-by', pr.signed_by ? fill(S.signedBy, 'name', pr.signed_by) : '')
      // The photo's element exists only while there is a photo to show (the carrier's setting decides).
      var box = el('proof-photo-box'), img = el('proof-photo')
      if (pr.photo && !img) {
        img = document.createElement('img')
        img.id = 'proof-photo'
        img.alt = S.photo
        img.src = location.pathname.replace(/\\/$/, '') + '/photo'
        box.appendChild(img)
      } else if (!pr.photo && img) box.removeChild(img)
      box.hidden = !pr.photo
    }
    // A window on screen (planned or live) is the promise now: a day-level date beside it would contradict it.
    text('promised', v.promised_delivery_at && !v.final && !v.delivery && !v.planned ? fill(S.promised, 'date', fmt(v.promised_delivery_at, true)) : '')
    var list = el('timeline')
    while (list.firstChild) list.removeChild(list.firstChild)
    v.timeline.slice().reverse().forEach(function (i) {
      var li = document.createElement('li')
      var what = document.createElement('span')
      what.textContent = i.name
      if (i.detail) { var s = document.createElement('span'); s.className = 'detail'; s.textContent = i.detail; what.appendChild(s) }
      var when = document.createElement('time')
      when.className = 'when'
      when.setAttribute('datetime', i.at)
      when.textContent = fmt(i.at, true)
      li.appendChild(what)
      li.appendChild(when)
      list.appendChild(li)
    })
  }
  function gone() {
    el('content').hidden = true
    el('content').textContent = ''
    el('gone').hidden = false
    el('state').textContent = ''
  }
  var source = new EventSource(location.pathname.replace(/\\/$/, '') + '/stream')
  source.addEventListener('tracking', function (m) { render(JSON.parse(m.data)) })
  source.addEventListener('gone', function () { source.close(); gone() })
  source.onopen = function () { el('state').textContent = S.live }
  source.onerror = function () {
    if (source.readyState === EventSource.CLOSED) gone()
    else el('state').textContent = S.reconnecting
  }
})()
`

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`

/** Only this page's own script and style run; it may talk to its own origin only; no frame, form or base. */
export const TRACKING_CSP = [
  "default-src 'none'", `script-src ${sha256(SCRIPT)}`, `style-src ${sha256(STYLE)}`, "connect-src 'self'", "img-src 'self'",
  "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ')

/** A JSON value inside a `<script type="application/json">` block: no `<` that could close it. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c')

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

function head(locale: TrackingLocale, title: string): string {
  return `<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>`
}

function page(locale: TrackingLocale): string {
  const s = PAGE_STRINGS[locale]
  return `${head(locale, s.title!)}
<body>
<main>
<div id="content" hidden>
<section class="card" aria-labelledby="status">
<p class="carrier" id="carrier"></p>
<h1><span class="dot" id="dot" aria-hidden="true"></span><span id="status"></span></h1>
<p class="eta" id="expected" hidden></p>
<p id="promised" hidden></p>
<p class="ids"><span>${esc(s.trackingNumber!)}: <b id="tracking-number"></b></span><span id="sender"></span></p>
</section>
<section class="card" id="delivery" hidden aria-label="${esc(s.arriving!)}">
<h2><span class="delayed-tag" id="delayed" hidden>${esc(s.delayed!)}</span><span id="eta-label">${esc(s.arriving!)}</span></h2>
<p class="eta" id="eta" hidden></p>
<p class="was" id="was" hidden>${esc(s.was!)} <s id="was-time"></s></p>
<p class="late-by" id="late-by" hidden></p>
<p class="on-way" id="on-way" hidden></p>
<p id="stops" hidden></p>
<p id="driver" hidden></p>
<figure id="map-box" hidden><svg id="map" viewBox="0 0 320 200" role="img" aria-label="${esc(s.map!)}"></svg><figcaption id="distance"></figcaption></figure>
</section>
<section class="card" id="attempt" hidden aria-labelledby="attempt-h">
<h2 id="attempt-h">${esc(s.attemptTitle!)}</h2>
<p id="attempt-reason" hidden></p>
<p id="attempt-at" hidden></p>
<p id="attempt-next" hidden></p>
</section>
<section class="card proof" id="proof" hidden aria-labelledby="delivered-at">
<h2 id="delivered-at" hidden></h2>
<p id="signed-by" hidden></p>
<div id="proof-photo-box" hidden></div>
</section>
<section class="card" aria-labelledby="history-h">
<h2 id="history-h">${esc(s.history!)}</h2>
<ol id="timeline"></ol>
</section>
</div>
<section class="card" id="gone" hidden><h1>${esc(s.gone!)}</h1><p>${esc(s.goneText!)}</p></section>
<p id="state" role="status">${esc(s.loading!)}</p>
<p class="zone" id="zone" hidden></p>
</main>
<script type="application/json" id="strings">${scriptJson(s)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`
}

function notAvailable(locale: TrackingLocale): string {
  const s = PAGE_STRINGS[locale]
  return `${head(locale, s.gone!)}
<body><main><section class="card"><h1>${esc(s.gone!)}</h1><p>${esc(s.goneText!)}</p></section></main></body>
</html>
`
}

export const TRACKING_PAGES: Record<TrackingLocale, string> = { en: page('en'), es: page('es') }
export const NOT_AVAILABLE_PAGES: Record<TrackingLocale, string> = { en: notAvailable('en'), es: notAvailable('es') }
