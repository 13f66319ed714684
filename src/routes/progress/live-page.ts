// The dispatcher's live route page (DESIGN §3.9, §3.10): static HTML, its data at `<this address>/data`
// and an EventSource on `<this address>/stream`; no build step, no framework, no outside request
// (with MAP_TILE_URL set: Leaflet from this server, tiles from that host). Everything from the data
// or the stream goes into the page as text (textContent) or as numbers in SVG attributes, never as markup.

const STYLE = `
  * { box-sizing: border-box; }
  body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1b1b1b; background: #f6f7f9; }
  header { background: #fff; border-bottom: 1px solid #dde1e6; padding: .9rem max(1.2rem, calc((100% - 76rem) / 2 + 1.2rem)); }
  main { max-width: 76rem; margin: 0 auto; padding: 1rem 1.2rem 2rem; display: grid; gap: 1rem; grid-template-columns: minmax(0, 1fr); }
  @media (min-width: 60rem) { main { grid-template-columns: minmax(0, 7fr) minmax(0, 5fr); } #map-panel { grid-column: 2; grid-row: 1 / span 3; } }
  h1 { font-size: 1.35rem; margin: 0; display: flex; gap: .6rem; align-items: baseline; flex-wrap: wrap; }
  .meta { margin: .3rem 0 0; color: #4a4f55; display: flex; gap: .4rem 1.2rem; flex-wrap: wrap; }
  .meta b { color: #1b1b1b; font-weight: 600; }
  .panel { background: #fff; border: 1px solid #dde1e6; border-radius: 8px; padding: .9rem 1rem; min-width: 0; }
  h2 { font-size: 1rem; margin: 0 0 .6rem; }
  .bar { display: flex; background: #e3e6ea; border-radius: 5px; height: 1.1rem; overflow: hidden; }
  .bar > span { height: 100%; width: 0; transition: width .3s; }
  .seg-complete { background: #2e7d32; }
  .seg-failed { background: repeating-linear-gradient(135deg, #c62828 0 6px, #e35d5d 6px 10px); }
  .seg-cancelled { background: #8a8f96; }
  .seg-started { background: #1e6fd0; }
  .legend { list-style: none; padding: 0; margin: .55rem 0 0; display: flex; gap: .3rem 1rem; flex-wrap: wrap; font-size: .9rem; color: #33373c; }
  .legend li::before { content: ""; display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; margin-right: .35rem; vertical-align: -1px; background: #e3e6ea; border: 1px solid #b9bec5; }
  .legend .l-complete::before { background: #2e7d32; border-color: #2e7d32; }
  .legend .l-failed::before { background: #c62828; border-color: #c62828; }
  .legend .l-cancelled::before { background: #8a8f96; border-color: #8a8f96; }
  .legend .l-started::before { background: #1e6fd0; border-color: #1e6fd0; }
  ol.stops { list-style: none; margin: 0; padding: 0; }
  .stop { display: grid; grid-template-columns: 2.2rem minmax(0, 1fr) auto; gap: .1rem .7rem; padding: .6rem 0; border-top: 1px solid #edf0f2; }
  .stop:first-child { border-top: 0; }
  .num { grid-row: 1 / span 3; width: 1.9rem; height: 1.9rem; border-radius: 50%; display: flex; align-items: center; justify-content: center; font-weight: 700; font-size: .85rem; background: #e3e6ea; color: #1b1b1b; }
  .stop.complete .num { background: #2e7d32; color: #fff; } .stop.failed .num { background: #c62828; color: #fff; }
  .stop.started .num, .stop.arrived .num { background: #1e6fd0; color: #fff; } .stop.cancelled .num { background: #8a8f96; color: #fff; }
  .recipient { font-weight: 600; overflow-wrap: anywhere; }
  .addr, .when { color: #4a4f55; font-size: .9rem; overflow-wrap: anywhere; grid-column: 2 / span 2; }
  .when .eta { color: #0b3d91; font-weight: 600; }
  .badge { grid-column: 3; grid-row: 1; align-self: start; font-size: .78rem; font-weight: 700; text-transform: uppercase; letter-spacing: .03em; padding: .12rem .45rem; border-radius: 4px; background: #eceef1; color: #33373c; white-space: nowrap; }
  .badge.complete { background: #e3f1e4; color: #1b5e20; } .badge.failed { background: #fdeaea; color: #a31515; }
  .badge.started, .badge.arrived { background: #e4eefb; color: #0b3d91; } .badge.cancelled { background: #eceef1; color: #4a4f55; }
  .status-chip { font-size: .8rem; font-weight: 700; text-transform: uppercase; padding: .1rem .5rem; border-radius: 4px; background: #e4eefb; color: #0b3d91; }
  #map-svg { width: 100%; height: auto; display: block; background: #eef2f5; border-radius: 6px; }
  #tiles { width: 100%; height: 24rem; border-radius: 6px; }
  .map-note { font-size: .85rem; color: #4a4f55; margin: .5rem 0 0; }
  #state { font-size: .85rem; color: #4a4f55; }
  .expired main { display: block; }
  .late-chip { font-size: .8rem; font-weight: 700; padding: .1rem .5rem; border-radius: 4px; background: #b3261e; color: #fff; }
  #attention { border: 2px solid #b3261e; background: #fff7f6; }
  #attention h2 { color: #8c1d18; }
  #late-list { list-style: none; margin: 0; padding: 0; }
  #late-list li { display: grid; grid-template-columns: 2.2rem minmax(0, 1fr) auto; gap: .1rem .7rem; padding: .45rem 0; border-top: 1px solid #f3d6d3; }
  #late-list li:first-child { border-top: 0; }
  #late-list .num { grid-row: 1 / span 2; background: #b3261e; color: #fff; }
  #late-list .times { grid-column: 2 / span 2; color: #33373c; font-size: .9rem; }
  .late-tag { grid-column: 3; align-self: start; font-size: .8rem; font-weight: 700; padding: .12rem .45rem; border-radius: 4px; background: #b3261e; color: #fff; white-space: nowrap; }
  .stop .late-tag { grid-column: 2 / span 2; justify-self: start; }
  .stop.late { background: #fff7f6; box-shadow: inset 4px 0 0 #b3261e; }
  .stop.late .num { background: #b3261e; color: #fff; }
  .stop.late .when .eta { color: #8c1d18; }
  .at-stop { grid-column: 2 / span 2; font-size: .9rem; font-weight: 600; color: #0b3d91; }
  .zone { color: #4a4f55; }
`

export const LIVE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Live route</title>
<style>${STYLE}</style>
</head>
<body>
<header>
  <h1><span id="route-name">Live route</span> <span class="status-chip" id="route-status"></span> <span class="late-chip" id="late-count" hidden></span></h1>
  <p class="meta"><span>Driver: <b id="driver">–</b></span><span>Vehicle: <b id="vehicle">–</b></span><span>Date: <b id="shift-date">–</b></span><span class="zone" id="zone"></span><span id="state" role="status">Connecting…</span></p>
</header>
<main>
  <section class="panel" id="attention" aria-labelledby="attention-title" hidden>
    <h2 id="attention-title">Late now</h2>
    <ol id="late-list"></ol>
  </section>
  <section class="panel" aria-labelledby="progress-title">
    <h2 id="progress-title">Progress</h2>
    <div class="bar" id="bar" role="progressbar" aria-labelledby="progress-title" aria-valuemin="0" aria-valuemax="100" aria-valuenow="0">
      <span class="seg-complete" id="seg-complete"></span><span class="seg-failed" id="seg-failed"></span><span class="seg-cancelled" id="seg-cancelled"></span><span class="seg-started" id="seg-started"></span>
    </div>
    <ul class="legend" id="summary">
      <li class="l-complete"><span id="n-complete">0</span> complete</li>
      <li class="l-failed"><span id="n-failed">0</span> failed</li>
      <li class="l-cancelled"><span id="n-cancelled">0</span> cancelled</li>
      <li class="l-started"><span id="n-started">0</span> under way</li>
      <li class="l-pending"><span id="n-pending">0</span> pending</li>
      <li><span id="n-total">0</span> stops</li>
    </ul>
  </section>
  <section class="panel" id="map-panel" aria-labelledby="map-title">
    <h2 id="map-title">Map</h2>
    <div id="tiles" hidden></div>
    <svg id="map-svg" viewBox="0 0 600 420" role="img" aria-labelledby="map-title map-desc"><desc id="map-desc">The stops, numbered in route order, and the driver's position</desc><g id="map-lines"></g><g id="map-stops"></g><g id="map-driver"></g></svg>
    <p class="map-note" id="driver-position">No recent position of the driver.</p>
  </section>
  <section class="panel" aria-labelledby="stops-title">
    <h2 id="stops-title">Stops</h2>
    <ol class="stops" id="tasks"></ol>
  </section>
</main>
<script>
(function () {
  var el = function (id) { return document.getElementById(id) }
  var base = location.pathname.replace(/\\/$/, '')
  var SVG = 'http://www.w3.org/2000/svg'
  var data = null
  var STATUS = { pending: 'Pending', started: 'On the way', arrived: 'Arrived', complete: 'Complete', failed: 'Failed', cancelled: 'Cancelled' }
  var ROUTE_STATUS = { draft: 'Draft', published: 'Published', started: 'Started', blocked: 'Blocked', finished: 'Finished' }
  var FILL = { complete: '#2e7d32', failed: '#c62828', cancelled: '#8a8f96', started: '#1e6fd0', arrived: '#1e6fd0', pending: '#ffffff' }
  function text(tag, cls, value) { var n = document.createElement(tag); if (cls) n.className = cls; n.textContent = value; return n }
  // Every time in the organization's time zone (the data names it; the header says which), never the browser's.
  var zone = 'UTC', clock = { at: Date.now(), now: Date.now(), rate: 1 }
  function time(iso) { var d = new Date(iso); return isNaN(d) ? '' : new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: zone }).format(d) }
  // The server's clock now (it may run faster in a simulation: CLOCK_RATE), for ages and "at stop for".
  function serverNow() { return clock.now + (Date.now() - clock.at) * clock.rate }
  function minutesSince(iso) { return Math.max(0, Math.floor((serverNow() - Date.parse(iso)) / 60000)) }
  function lateBy(s) { return s.eta && s.eta.late ? s.eta.late_by_minutes : null }
  function etaText(s) { return 'ETA ' + time(s.eta.at) + ' (' + time(s.eta.from) + '–' + time(s.eta.to) + ')' }
  var COMPASS = ['north', 'north-east', 'east', 'south-east', 'south', 'south-west', 'west', 'north-west']
  function compass(deg) { return COMPASS[Math.round((((deg % 360) + 360) % 360) / 45) % 8] }
  function ago(iso) { var m = minutesSince(iso); return m < 1 ? 'less than a minute ago' : m === 1 ? '1 min ago' : m + ' min ago' }
  function windows(ws) { return (ws || []).map(function (w) { return time(w.from) + '–' + time(w.to) }).join(', ') }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild) }

  function render() {
    var d = data
    el('route-name').textContent = d.route.name || ('Route of ' + d.route.shift_date)
    document.title = (d.route.name || 'Route') + ' · live'
    el('route-status').textContent = (ROUTE_STATUS[d.route.status] || d.route.status) + (d.route.status === 'blocked' && d.route.blocked_reason ? ': ' + d.route.blocked_reason : '')
    el('driver').textContent = d.driver ? d.driver.name : 'none'
    el('vehicle').textContent = d.vehicle ? d.vehicle.name + (d.vehicle.plate ? ' (' + d.vehicle.plate + ')' : '') : 'none'
    el('shift-date').textContent = d.route.shift_date
    el('zone').textContent = 'Times in ' + zone
    // Late stops first: counted in the header and listed above everything else, the latest first.
    var late = d.stops.filter(function (s) { return lateBy(s) !== null }).sort(function (x, y) { return lateBy(y) - lateBy(x) || x.position - y.position })
    el('late-count').hidden = late.length === 0
    el('late-count').textContent = late.length + ' late'
    el('attention').hidden = late.length === 0
    el('attention-title').textContent = late.length === 1 ? '1 stop late now' : late.length + ' stops late now'
    var lateList = el('late-list')
    clear(lateList)
    late.forEach(function (s) {
      var li = document.createElement('li')
      li.setAttribute('data-ulid', s.ulid)
      li.appendChild(text('span', 'num', String(s.position)))
      li.appendChild(text('span', 'recipient', s.recipient || (s.type === 'pickup' ? 'Pickup' : 'Delivery')))
      li.appendChild(text('span', 'late-tag', 'late ' + lateBy(s) + ' min'))
      li.appendChild(text('span', 'times', (s.eta.window ? 'Window ' + time(s.eta.window.from) + '–' + time(s.eta.window.to) + ' · ' : '') + etaText(s)))
      lateList.appendChild(li)
    })
    var p = d.progress, total = p.total || 1
    ;['complete', 'failed', 'cancelled', 'started'].forEach(function (k) { el('seg-' + k).style.width = (100 * p[k] / total) + '%' })
    ;['complete', 'failed', 'cancelled', 'started', 'pending', 'total'].forEach(function (k) { el('n-' + k).textContent = String(p[k]) })
    el('bar').setAttribute('aria-valuenow', String(p.percent))
    el('bar').setAttribute('aria-valuetext', p.complete + ' complete, ' + p.failed + ' failed, ' + p.cancelled + ' cancelled of ' + p.total)
    var list = el('tasks')
    clear(list)
    d.stops.forEach(function (s) {
      var li = document.createElement('li')
      var lb = lateBy(s)
      li.className = 'stop ' + s.status + (lb !== null ? ' late' : '')
      li.setAttribute('data-ulid', s.ulid)
      li.appendChild(text('span', 'num', String(s.position)))
      li.appendChild(text('span', 'recipient', s.recipient || (s.type === 'pickup' ? 'Pickup' : 'Delivery')))
      li.appendChild(text('span', 'badge status ' + s.status, STATUS[s.status] || s.status))
      if (lb !== null) li.appendChild(text('span', 'late-tag', 'late ' + lb + ' min'))
      if (s.status === 'arrived' && s.arrived_at) li.appendChild(text('span', 'at-stop', 'At stop for ' + minutesSince(s.arrived_at) + ' min'))
      li.appendChild(text('span', 'addr', s.address_line || 'No address'))
      var when = document.createElement('span')
      when.className = 'when'
      var parts = []
      if (s.time_windows && s.time_windows.length) parts.push('Window ' + windows(s.time_windows))
      when.appendChild(document.createTextNode(parts.join('')))
      if (s.eta) {
        if (parts.length) when.appendChild(document.createTextNode(' · '))
        var eta = text('span', 'eta', etaText(s))
        eta.setAttribute('data-eta', s.eta.at)
        when.appendChild(eta)
      }
      li.appendChild(when)
      list.appendChild(li)
    })
    drawMap()
  }

  // The map: stops and driver projected onto the SVG from their coordinates (equirectangular, scaled by
  // the latitude's cosine), or, with tiles configured, Leaflet's map with the same marks drawn as SVG.
  var tiles = null, tileMarks = null
  function points() {
    var pts = data.stops.filter(function (s) { return typeof s.lat === 'number' && typeof s.lng === 'number' })
    return pts
  }
  function drawMap() {
    var pos = data.driver_position
    el('driver-position').textContent = pos ? 'Driver’s last position ' + ago(pos.recorded_at) + ' (' + time(pos.recorded_at) + ')' +
      (typeof pos.heading === 'number' ? ', heading ' + compass(pos.heading) + ' (' + Math.round(pos.heading) + '°)' : '') +
      ' · ' + pos.lat.toFixed(4) + ', ' + pos.lng.toFixed(4) : 'No recent position of the driver.'
    if (data.tile_url && window.L) return drawTiles()
    var pts = points()
    var all = pts.map(function (s) { return [s.lat, s.lng] })
    if (pos) all.push([pos.lat, pos.lng])
    ;['map-lines', 'map-stops', 'map-driver'].forEach(function (id) { clear(el(id)) })
    if (!all.length) return
    var minLat = Math.min.apply(null, all.map(function (a) { return a[0] })), maxLat = Math.max.apply(null, all.map(function (a) { return a[0] }))
    var minLng = Math.min.apply(null, all.map(function (a) { return a[1] })), maxLng = Math.max.apply(null, all.map(function (a) { return a[1] }))
    var k = Math.cos((minLat + maxLat) / 2 * Math.PI / 180)
    var w = Math.max((maxLng - minLng) * k, 0.002), h = Math.max(maxLat - minLat, 0.002)
    var scale = Math.min(520 / w, 340 / h)
    var ox = 300 - ((minLng + maxLng) / 2 * k) * scale, oy = 210 + ((minLat + maxLat) / 2) * scale
    function xy(lat, lng) { return [ox + lng * k * scale, oy - lat * scale] }
    var line = document.createElementNS(SVG, 'polyline')
    line.setAttribute('points', pts.map(function (s) { var q = xy(s.lat, s.lng); return q[0].toFixed(1) + ',' + q[1].toFixed(1) }).join(' '))
    line.setAttribute('fill', 'none'); line.setAttribute('stroke', '#7a8794'); line.setAttribute('stroke-width', '2'); line.setAttribute('stroke-dasharray', '6 4')
    el('map-lines').appendChild(line)
    pts.forEach(function (s) {
      var q = xy(s.lat, s.lng)
      var g = document.createElementNS(SVG, 'g')
      g.setAttribute('class', 'stop-mark ' + s.status)
      g.setAttribute('data-ulid', s.ulid)
      var c = document.createElementNS(SVG, 'circle')
      c.setAttribute('cx', q[0].toFixed(1)); c.setAttribute('cy', q[1].toFixed(1)); c.setAttribute('r', '17')
      // A late stop is ringed in red on the map too.
      var isLate = lateBy(s) !== null
      c.setAttribute('fill', FILL[s.status] || '#fff'); c.setAttribute('stroke', isLate ? '#b3261e' : '#1b1b1b'); c.setAttribute('stroke-width', isLate ? '4' : '1.5')
      var t = document.createElementNS(SVG, 'text')
      t.setAttribute('x', q[0].toFixed(1)); t.setAttribute('y', (q[1] + 5.5).toFixed(1)); t.setAttribute('text-anchor', 'middle')
      t.setAttribute('font-size', '16'); t.setAttribute('font-weight', '700'); t.setAttribute('fill', s.status === 'pending' ? '#1b1b1b' : '#fff')
      t.textContent = String(s.position)
      var title = document.createElementNS(SVG, 'title')
      title.textContent = s.position + '. ' + (s.recipient || '') + ' (' + (STATUS[s.status] || s.status) + (isLate ? ', late ' + lateBy(s) + ' min' : '') + ')'
      g.appendChild(title); g.appendChild(c); g.appendChild(t)
      el('map-stops').appendChild(g)
    })
    if (pos) {
      var q = xy(pos.lat, pos.lng)
      var g = document.createElementNS(SVG, 'g')
      g.setAttribute('id', 'driver-mark')
      var halo = document.createElementNS(SVG, 'circle')
      halo.setAttribute('cx', q[0].toFixed(1)); halo.setAttribute('cy', q[1].toFixed(1)); halo.setAttribute('r', '22'); halo.setAttribute('fill', 'rgba(30,111,208,.25)')
      var dot = document.createElementNS(SVG, 'circle')
      dot.setAttribute('cx', q[0].toFixed(1)); dot.setAttribute('cy', q[1].toFixed(1)); dot.setAttribute('r', '10'); dot.setAttribute('fill', '#1e6fd0'); dot.setAttribute('stroke', '#fff'); dot.setAttribute('stroke-width', '3')
      var title = document.createElementNS(SVG, 'title')
      title.textContent = 'Driver, last position ' + ago(pos.recorded_at)
      g.appendChild(title)
      // Its heading: an arrow from the dot the way the driver faces (under the dot, drawn first).
      if (typeof pos.heading === 'number') {
        var arrow = document.createElementNS(SVG, 'path')
        arrow.setAttribute('id', 'driver-heading')
        arrow.setAttribute('d', 'M' + q[0].toFixed(1) + ',' + (q[1] - 30).toFixed(1) + ' l-9,16 l18,0 z')
        arrow.setAttribute('fill', '#0b3d91')
        arrow.setAttribute('transform', 'rotate(' + Math.round(pos.heading) + ' ' + q[0].toFixed(1) + ' ' + q[1].toFixed(1) + ')')
        g.appendChild(arrow)
      }
      // The position's age beside the mark, so an old position reads as old.
      var age = document.createElementNS(SVG, 'text')
      age.setAttribute('id', 'driver-age')
      age.setAttribute('x', (q[0] + 26).toFixed(1)); age.setAttribute('y', (q[1] - 14).toFixed(1))
      age.setAttribute('font-size', '14'); age.setAttribute('font-weight', '700'); age.setAttribute('fill', '#0b3d91')
      age.setAttribute('stroke', '#fff'); age.setAttribute('stroke-width', '4'); age.setAttribute('paint-order', 'stroke')
      age.textContent = ago(pos.recorded_at)
      g.appendChild(age)
      g.appendChild(halo); g.appendChild(dot)
      el('map-driver').appendChild(g)
    }
  }
  function drawTiles() {
    var L = window.L
    el('map-svg').setAttribute('hidden', '')
    el('tiles').hidden = false
    if (!tiles) {
      tiles = L.map('tiles', { attributionControl: true })
      L.tileLayer(data.tile_url, { maxZoom: 19 }).addTo(tiles)
    }
    if (tileMarks) tileMarks.remove()
    tileMarks = L.featureGroup()
    var pts = points()
    if (pts.length > 1) L.polyline(pts.map(function (s) { return [s.lat, s.lng] }), { color: '#55606b', weight: 2, dashArray: '6 4' }).addTo(tileMarks)
    pts.forEach(function (s) {
      var m = L.circleMarker([s.lat, s.lng], { radius: 11, color: '#1b1b1b', weight: 1.5, fillColor: FILL[s.status] || '#fff', fillOpacity: 1 })
      m.bindTooltip(String(s.position), { permanent: true, direction: 'center', className: 'num-tip' })
      m.addTo(tileMarks)
    })
    var pos = data.driver_position
    if (pos) L.circleMarker([pos.lat, pos.lng], { radius: 8, color: '#fff', weight: 3, fillColor: '#1e6fd0', fillOpacity: 1 }).addTo(tileMarks)
    tileMarks.addTo(tiles)
    if (!tiles._fitted && tileMarks.getLayers().length) { tiles.fitBounds(tileMarks.getBounds().pad(0.15)); tiles._fitted = true }
  }
  function withLeaflet(then) {
    if (!data.tile_url || window.L) return then()
    var css = document.createElement('link'); css.rel = 'stylesheet'; css.href = '/live/assets/leaflet.css'; document.head.appendChild(css)
    var js = document.createElement('script'); js.src = '/live/assets/leaflet.js'; js.onload = then; js.onerror = then; document.head.appendChild(js)
  }

  var expired = false
  function gone(seen) {
    expired = true
    data = null
    ;['tasks', 'late-list', 'map-lines', 'map-stops', 'map-driver'].forEach(function (id) { clear(el(id)) })
    ;['route-status', 'driver', 'vehicle', 'shift-date', 'zone'].forEach(function (id) { el(id).textContent = '' })
    el('late-count').hidden = true
    el('attention').hidden = true
    ;['complete', 'failed', 'cancelled', 'started'].forEach(function (k) { el('seg-' + k).style.width = '0' })
    el('route-name').textContent = 'Link expired or invalid'
    el('driver-position').textContent = ''
    el('state').textContent = seen ? 'This link has expired.' : 'This link has expired or is not valid.'
  }

  // The page's data is read at the start and when the route's tasks change (added, removed,
  // reordered, the route edited, a new snapshot); a status, an ETA or the route's state is applied
  // from its frame. At most one read at a time; a frame that comes during a read asks for another.
  var loading = false, again = false, first = true
  function load() {
    if (expired) return
    if (loading) { again = true; return }
    loading = true
    fetch(base + '/data', { cache: 'no-store', credentials: 'omit' }).then(function (r) {
      if (r.status === 404) { gone(!first); return null }
      if (!r.ok) throw new Error(String(r.status))
      return r.json()
    }).then(function (d) {
      if (!d || expired) return
      data = d
      zone = d.time_zone || 'UTC'
      clock = { at: Date.now(), now: Date.parse(d.clock && d.clock.now) || Date.now(), rate: (d.clock && d.clock.rate) || 1 }
      if (first) { first = false; withLeaflet(render) } else render()
    }).catch(function () { again = true }).then(function () {
      loading = false
      if (again) { again = false; setTimeout(load, 250) }
    })
  }
  function apply(name, d) {
    if (!data || loading) return load()
    var stop = null
    data.stops.forEach(function (s) { if (s.ulid === d.task_ulid) stop = s })
    if (name === 'task.eta') {
      if (!stop) return load()
      stop.eta = d.eta || null
    } else if (name.indexOf('task.') === 0) {
      if (!stop) return load()
      stop.status = String(d.status)
      if (stop.status !== 'pending' && stop.status !== 'started') stop.eta = null
      // The arrival's time comes with the data (for "at stop for"): read it once shown.
      if (name === 'task.arrived') setTimeout(load, 0)
    } else {
      data.route.status = String(d.status)
      data.route.blocked_reason = d.blocked_reason == null ? null : String(d.blocked_reason)
    }
    if (d.progress) data.progress = d.progress
    render()
  }
  load()
  // Ages and "at stop for" move on with the clock, between frames too.
  setInterval(function () { if (data && !expired && !loading) render() }, 20000)
  var source = new EventSource(base + '/stream')
  ;['snapshot', 'task.added', 'task.removed', 'tasks.reordered', 'route.updated'].forEach(function (name) {
    source.addEventListener(name, function () { load() })
  })
  ;['task.started', 'task.arrived', 'task.completed', 'task.failed', 'task.cancelled', 'task.eta',
    'route.published', 'route.started', 'route.finished', 'route.blocked', 'route.unblocked'].forEach(function (name) {
    source.addEventListener(name, function (m) { apply(name, JSON.parse(m.data)) })
  })
  source.addEventListener('driver.position', function (m) {
    var p = JSON.parse(m.data)
    if (!data || typeof p.lat !== 'number' || typeof p.lng !== 'number') return
    data.driver_position = { lat: p.lat, lng: p.lng, recorded_at: String(p.recorded_at) }
    if (typeof p.heading === 'number') data.driver_position.heading = p.heading
    drawMap()
  })
  source.onopen = function () { if (!expired) el('state').textContent = 'Live' }
  source.onerror = function () {
    if (source.readyState === EventSource.CLOSED) {
      // Refused (the link expired or was never valid): nothing of the route stays on the page.
      source.close()
      gone(!first)
    } else if (!expired) {
      el('state').textContent = 'Reconnecting…'
    }
  }
})()
</script>
</body>
</html>
`

export const EXPIRED_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Link expired or invalid</title>
<style>body { font: 16px/1.4 system-ui, sans-serif; margin: 2rem auto; max-width: 40rem; padding: 1rem; }</style></head>
<body><main><h1>Link expired or invalid</h1><p>Ask whoever sent it for a new link.</p></main></body>
</html>
`
