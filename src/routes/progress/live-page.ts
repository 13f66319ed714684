// The live route page (DESIGN §3.9): static HTML and an EventSource on `<this address>/stream`; no
// build step. Everything from the stream goes into the page as text (textContent), never as markup.

const STYLE = `
  body { font: 16px/1.4 system-ui, sans-serif; margin: 0 auto; max-width: 40rem; padding: 1rem; color: #1b1b1b; }
  h1 { font-size: 1.3rem; margin: 0 0 .5rem; }
  .bar { background: #e6e6e6; border-radius: 4px; height: 1.2rem; overflow: hidden; }
  .bar > div { background: #2e7d32; height: 100%; width: 0; transition: width .3s; }
  ol { padding-left: 1.5rem; }
  li { padding: .3rem 0; border-bottom: 1px solid #eee; }
  .status { float: right; font-weight: 600; }
  .complete { color: #2e7d32; } .failed { color: #c62828; } .cancelled { color: #777; }
  .started, .arrived { color: #1565c0; }
  #state { color: #555; font-size: .9rem; }
`

export const LIVE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Route progress</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Route <span id="route"></span> <small id="route-status"></small></h1>
<div class="bar" role="progressbar" aria-valuemin="0" aria-valuemax="100" id="bar"><div id="fill"></div></div>
<p id="summary"></p>
<ol id="tasks"></ol>
<p id="state">Connecting…</p>
<script>
(function () {
  var tasks = [] // [{ulid, status}] in route order
  var el = function (id) { return document.getElementById(id) }
  function render(d) {
    if (d.route_id !== undefined) el('route').textContent = '#' + d.route_id
    if (d.progress) {
      var p = d.progress
      el('fill').style.width = p.percent + '%'
      el('bar').setAttribute('aria-valuenow', String(p.percent))
      el('summary').textContent = p.percent + '% · ' + p.complete + ' complete, ' + p.failed + ' failed, ' + p.cancelled + ' cancelled, ' + p.started + ' under way, ' + p.pending + ' pending of ' + p.total
    }
    var list = el('tasks')
    while (list.firstChild) list.removeChild(list.firstChild)
    tasks.forEach(function (t) {
      var li = document.createElement('li')
      li.setAttribute('data-ulid', t.ulid)
      var s = document.createElement('span')
      s.className = 'status ' + t.status
      s.textContent = t.status
      li.appendChild(s)
      li.appendChild(document.createTextNode(t.ulid))
      list.appendChild(li)
    })
  }
  function showStatus(d) {
    el('route-status').textContent = d.status + (d.status === 'blocked' && d.blocked_reason ? ': ' + d.blocked_reason : '')
  }
  var source = new EventSource(location.pathname.replace(/\\/$/, '') + '/stream')
  var seen = false
  source.addEventListener('snapshot', function (m) {
    var d = JSON.parse(m.data)
    seen = true
    tasks = d.tasks.map(function (t) { return { ulid: t.ulid, status: t.status } })
    showStatus(d)
    render(d)
  })
  var names = ['task.added', 'task.removed', 'tasks.reordered', 'task.started', 'task.arrived', 'task.completed', 'task.failed', 'task.cancelled',
    'route.published', 'route.started', 'route.finished', 'route.blocked', 'route.unblocked', 'route.updated']
  names.forEach(function (name) {
    source.addEventListener(name, function (m) {
      var d = JSON.parse(m.data)
      if (d.task_ulids) {
        var known = {}
        tasks.forEach(function (t) { known[t.ulid] = t.status })
        tasks = d.task_ulids.map(function (u) { return { ulid: u, status: known[u] || 'pending' } })
      }
      if (d.task_ulid) {
        tasks.forEach(function (t) { if (t.ulid === d.task_ulid) t.status = d.status })
      } else {
        showStatus(d)
      }
      render(d)
    })
  })
  source.onopen = function () { el('state').textContent = 'Live' }
  source.onerror = function () {
    if (source.readyState === EventSource.CLOSED) {
      // Refused (the link expired or was never valid): nothing of the route stays on the page.
      tasks = []
      el('tasks').textContent = ''
      el('summary').textContent = ''
      el('route').textContent = ''
      el('route-status').textContent = ''
      el('fill').style.width = '0'
      el('state').textContent = seen ? 'This link has expired.' : 'This link has expired or is not valid.'
    } else {
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
<body><h1>Link expired or invalid</h1><p>Ask whoever sent it for a new link.</p></body>
</html>
`
