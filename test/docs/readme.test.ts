import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

/**
 * Runs the README's session as a newcomer would paste it: the block marked
 * `<!-- readme-test: server -->` starts `npm start`, then every block marked
 * `<!-- readme-test: session -->` runs, in order, in one bash (variables carry over), under
 * `set -euo pipefail` so that a failing command or an undefined variable stops it.
 */
const root = fileURLToPath(new URL('../..', import.meta.url))
const README = readFileSync(join(root, 'README.md'), 'utf8')

function markedBlocks(markdown: string, kind: string): string[] {
  const re = new RegExp(`<!-- readme-test: ${kind} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\`\\n`, 'g')
  return [...markdown.matchAll(re)].map((m) => m[1]!)
}

const freePort = () => new Promise<number>((resolve, reject) => {
  const s = createServer()
  s.once('error', reject)
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address() as { port: number }
    s.close(() => resolve(port))
  })
})

interface Shell { child: ChildProcess; out: () => string; exited: Promise<number | null> }

/** bash in its own process group, so that teardown also stops what it left running in the background. */
function bash(t: { teardown(fn: () => unknown): void }, script: string, env: NodeJS.ProcessEnv): Shell {
  const child = spawn('bash', ['-c', script], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.on('data', (d) => { out += String(d) })
  child.stderr!.on('data', (d) => { out += String(d) })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  t.teardown(async () => {
    try { process.kill(-child.pid!, 'SIGTERM') } catch { return }
    // npm start shuts the platform down on SIGTERM; give it a moment before the hard stop.
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      try { process.kill(-child.pid!, 0) } catch { return }
      await new Promise((r) => setTimeout(r, 100))
    }
    try { process.kill(-child.pid!, 'SIGKILL') } catch { /* gone */ }
  })
  return { child, out: () => out, exited }
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs
  while (Date.now() < end) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

t.test('the README marks one server block and the session blocks', async (t) => {
  t.equal(markedBlocks(README, 'server').length, 1)
  t.ok(markedBlocks(README, 'session').length >= 5)
})

t.test("the README's session runs as written against npm start", async (t) => {
  const which = (cmd: string) => { try { execFileSync('bash', ['-c', `command -v ${cmd}`]); return true } catch { return false } }
  t.ok(which('curl'), 'the session needs curl (infra/local/test.sh installs it when missing)')

  const dataDir = mkdtempSync(join(tmpdir(), 'readme-'))
  // mkdtemp makes it 0700: as root, the embedded PostgreSQL's user (postgres) must reach its folder.
  chmodSync(dataDir, 0o755)
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['DATABASE_URL', 'EVENTSTORE_URL', 'NATS_URL', 'ADMIN_TOKEN', 'SECRETS_KEY', 'BLOB_DIR', 'HOST', 'WEBHOOK_SECRET', 'ALLOW_PRIVATE_URLS', 'TAP', 'TAP_CHILD_ID']) delete env[name]
  Object.assign(env, { PORT: String(await freePort()), DATA_DIR: dataDir, WEBHOOK_SINK_PORT: String(await freePort()), LOG_LEVEL: 'warn' })
  // The server as the README's reader starts it: the embedded default under DATA_DIR.
  const serverEnv = env

  const started = Date.now()
  const server = bash(t, markedBlocks(README, 'server')[0]!, serverEnv)
  const base = `http://127.0.0.1:${env.PORT}`
  let serverGone: number | null | undefined
  void server.exited.then((code) => { serverGone = code })
  await until(async () => {
    if (serverGone !== undefined) throw new Error(`npm start exited ${serverGone}:\n${server.out()}`)
    return fetch(`${base}/health`).then((r) => r.ok, () => false)
  }, 120_000, `npm start to answer on ${base}`)
  t.comment(`npm start answered after ${((Date.now() - started) / 1000).toFixed(1)} s`)

  const blocks = markedBlocks(README, 'session')
  const script = [
    'set -euo pipefail',
    `trap 'echo "::readme-failed line $LINENO: exit $?"' ERR`,
    ...blocks.flatMap((block, i) => [`printf '\\n::readme-block ${i}\\n'`, block]),
    `printf '\\n::readme-end\\n'`,
  ].join('\n')
  const session = bash(t, script, env)
  const code = await session.exited
  t.comment(`the session ran in ${((Date.now() - started) / 1000).toFixed(1)} s from the server's start`)
  const out = session.out()
  const reached = [...out.matchAll(/::readme-block (\d+)/g)].pop()?.[1]
  t.equal(code, 0, `every block exits 0 (stopped in block ${reached}: ${blocks[Number(reached)]?.split('\n')[0]})\n${out.slice(-1500)}`)
  t.match(out, /::readme-end/, 'the session ran to its end')

  // Each block's output, by the marker printed before it (the sink's lines may land in any of
  // them); the blocks that ran are checked even when a later one failed.
  const parts = out.split(/\n::readme-block \d+\n/).slice(1)
  const [, orgs = '', shipment = '', reads = '', carrier = '', tariff = '', ship = '', delivery = '', crew = '', , task = '', driver = '', hooks = '', workflow = '', steps = '', served = '', routeBuild = '', routePublish = '', routeLive = '', routeDrive = ''] = parts
  t.match(orgs, /"contract":\{"id":"ctr_\w+".*"status":"active"/, 'the contract is signed')
  t.match(shipment, '"city":{"id":1409,"name":"Córdoba"}', 'the city is resolved')
  t.match(shipment, '"phone_raw":"0351 422-1234","phone":"+543514221234"', 'the phone is normalised')
  t.match(shipment, '"weight":{"value":2500,"original_value":2.5,"unit":"kg"}')
  t.match(shipment, '"length":{"value":31,"original_value":12,"unit":"in"}')
  t.match(reads, /^%PDF-$/m, 'the label is a PDF (saved in the session\'s own directory)')
  t.match(reads, /\^XA[\s\S]*\^XZ/, 'the ZPL label')
  t.match(reads, /"tracking":\[\{"status":\{"code":"pending"/)
  t.match(reads, /"success":true,"shipment":\{[^\n]*"status":\{"code":"cancelled"/)
  t.match(reads, /"type":"ShipmentCreated"[^\n]*"type":"LabelPrinted"[^\n]*"type":"ShipmentCancelled"/)
  const asOf = reads.trim().split('\n').pop()!
  t.match(asOf, /^\{"id":\d+,[^\n]*"status":\{"code":"pending"/, 'as_of a moment before the cancellation: still pending')
  t.match(carrier, /"certification_status":"certified"[^\n]*"notification_url":"http:\/\/127\.0\.0\.1:\d+\/hooks"/)
  t.match(tariff, /"status":"active"/)
  t.match(ship, '{"quotes":[{"service_type_id":1,"service_type_name":"Standard","price":4200,"currency":"ARS","estimated_delivery_days":3}]}')
  t.match(delivery, /"status":\{"code":"delivered"/)
  t.match(delivery, '{"message":"The shipment is final (delivered); its status cannot change.","code":"shipment_final"}')
  t.match(delivery, /\{"data":\[\{"id":\d+,[^\n]*"meta":\{"next_cursor":/, 'the reconciliation feed lists the shipment')

  // Operations: a driver and a vehicle, a task at a saved place, the driver's proof of delivery.
  t.match(crew, /"vehicle":\{"id":"veh_\w+","name":"Van 1","plate":"AB 123 CD","capacity":\{"grams":800000,"volume_cm3":9000000,"packages":120\}/)
  t.match(task, /"task":\{"ulid":"\w{26}","type":"delivery","status":"pending"/)
  t.match(task, /"assignee":\{"id":"usr_\w+","name":"Dana Driver"\}/)
  t.match(task, /"address":\{[^\n]*"street":"Bv. San Juan"/, 'the saved place is the task\'s address')
  t.match(driver, /"status":"started"/)
  t.match(driver, /"errors":\{[^\n]*"signed_by"[^\n]*"attachment_ids"|"errors":\{[^\n]*"attachment_ids"[^\n]*"signed_by"/, 'a complete without proof names both fields')
  t.match(driver, /"status":"complete"/)
  t.match(driver, /"signed_by":"Ana Gómez"/)
  t.match(driver, /"code":"driver_not_allowed"/, 'the driver\'s token reaches only its own work')
  t.match(driver, /"type":"TaskCreated"[^\n]*"type":"TaskStarted"[^\n]*"type":"TaskAttachmentAdded"[^\n]*"type":"TaskCompleted"/)
  const taskUlid = /"task":\{"ulid":"(\w{26})"/.exec(task)?.[1]
  t.match(hooks, /\{"data":\[\{"id":"msg_\w+","type":"task\.\w+","status":"delivered","attempts":\[\{"attempt":1,[^\n]*"status_code":204/, 'the delivery log')
  t.match(hooks, /"success":true,"delivery":\{"id":"msg_\w+"[^\n]* → 202/, 'a redelivery by its real id')

  // Workflows: a published blueprint, the manager's next task and retry, a service_routes shipment delivered by its workflow.
  t.match(workflow, /"blueprint":\{"id":\d+,"key":"collect-deliver","name":"Collect, then deliver","version":1,"status":"published"/)
  t.match(workflow, /\{"success":true,"workflow":\{"data":\{"id":\d+,"status":"new"/, 'the spec\'s wrapper')
  t.match(steps, /"step_key":"collect"[^\n]*"step_key":"deliver"[^\n]*"step_key":"deliver"/, 'the delivery task, then its retry')
  t.match(steps, /"type":"WorkflowTaskCreated"[^\n]*"action_key":"workflow:\d+:step:collect:attempt:1:action:0"/)
  t.match(served, /"status":\{"code":"delivered"[^\n]*"source":"routes","signed_by":"Ana Gómez"/)

  // Routes: tomorrow's route filled to the van's capacity, publication, a live link, the driver's progress.
  t.match(routeBuild, /"route":\{"id":\d+,[^\n]*"status":"draft"/)
  t.match(routeBuild, /"load":\{"grams":8000,[^\n]*→ 200/, 'two 4 kg deliveries fit the 10 kg van')
  t.match(routeBuild, /"errors":\{"task_ulids":\["The route's load would exceed the vehicle's capacity in grams: capacity 10000, peak 12000\."\]\}\} → 422/, 'the third is refused, naming task_ulids, the dimension, the capacity and the peak')
  t.match(routePublish, /"code":"not_acceptable"\} → 406/, 'no driver: 406')
  t.match(routePublish, /"status":"published"/)
  t.match(routePublish, /\{"routes":\{"data":\[\{"id":\d+,[^\n]*"status":"published"/, 'the driver sees the published route')
  t.match(routeLive, /\{"url":"http:\/\/127\.0\.0\.1:\d+\/live\/routes\/[\w.-]+","expires_at":"/)
  t.match(routeLive, /<title>[^<]+<\/title>/, 'the live page is HTML')
  t.match(routeLive, /^data: \{[^\n]*"tasks":\[/m, 'its stream starts with the snapshot')
  t.match(routeLive, /"status":"published"[^\n]*"progress":\{[^\n]*"total":2[^\n]*"percent":0/)
  t.match(routeDrive, /"percent":50/, 'one of two tasks complete')
  t.match(routeDrive, /"status":"finished"[^\n]*"percent":100/)
  t.match(routeDrive, /"type":"RoutePublished"[^\n]*"type":"RouteStarted"[^\n]*"type":"RouteFinished"/)

  // Public tracking (issue 24): the link, the Spanish page, the data, the stream's first frame, an altered link.
  const tracking = parts.find((p) => /\/track\/[0-9A-Z]{26}\./.test(p)) ?? ''
  t.match(tracking, /^http:\/\/127\.0\.0\.1:\d+\/track\/[0-9A-Z]{26}\.[\w-]{22}$/m, 'public_tracking_url')
  t.match(tracking, '<title>Seguí tu envío</title>')
  t.match(tracking, /\{"locale":"en","carrier":"Fast Carrier","status":\{"code":"pending"[^\n]*"delivery":null\}/)
  t.notMatch(tracking, /Eva Sosa|Oroño/, 'nothing of the recipient')
  t.match(tracking, /^event: tracking$/m)
  t.match(tracking, /^404$/m)
  // Planning tomorrow's routes: 40 tasks over at most 3 vans, then published.
  const planning = parts.find((p) => /planned \d+ routes/.test(p)) ?? ''
  const planned = /planned (\d+) routes: ([^;]*); unassigned (\d+) (\[[^\n]*\]); /.exec(planning)
  t.ok(planned, `the plan's summary line\n${planning.slice(0, 1500)}`)
  if (planned) {
    const routes = Number(planned[1])
    t.ok(routes >= 1 && routes <= 3, 'three vans or fewer')
    const placed = [...planned[2]!.matchAll(/(\d+) tasks/g)].reduce((n, m) => n + Number(m[1]), 0)
    const unassigned = JSON.parse(planned[4]!) as { task_ulid: string; reason: string }[]
    t.equal(unassigned.length, Number(planned[3]))
    t.equal(placed + unassigned.length, 40, 'every task placed or reported')
    t.ok(unassigned.every((u) => ['time_window', 'capacity', 'shift', 'fleet'].includes(u.reason)), 'each unassigned task has its reason')
    t.equal([...planning.matchAll(/published route \d+: published/g)].length, routes, 'every planned route published')
  }

  // The auditor (the README's last session block): the delivered shipment's history verified offline, a consistency proof, a 422.
  const audit = parts[parts.length - 1] ?? ''
  t.match(audit, /^OK: \d+ events of shipment-\d+, tree head of size \d+: every event is in the signed tree as shown/m, 'verify-history passes')
  t.match(audit, /\{"from":1,"to":\d+,"consistency_path":\[/)
  t.match(audit, /"errors":\{"from":\["The from may not be greater than to\."\]\}/)

  // The platform signed its webhooks with the carrier's secret and the sink verified them.
  if (code === 0) await until(() => /verified ready_to_ship /.test(session.out()), 30_000, 'the sink to print the ready_to_ship delivery')
  const sinkLines = session.out().split('\n').filter((l) => l.startsWith('[webhook-sink] '))
  t.match(sinkLines.join('\n'), /\[webhook-sink\] verified new shipment_id=\d+ notification_id=ntf_\w+ carrier_id=car_\w+ webhook-id=ntf_\w+ → 204/)
  t.match(sinkLines.join('\n'), /\[webhook-sink\] verified ready_to_ship shipment_id=\d+ /)
  // The organization's webhook: the second sink verified the task's events with the subscription's secret.
  if (code === 0) await until(() => new RegExp(`verified task.completed subject=${taskUlid} `).test(session.out()), 30_000, 'the second sink to print task.completed')
  // Not split into lines: a sink's line may land in the middle of a curl reply written in two parts.
  const opsLines = session.out()
  t.match(opsLines, new RegExp(`\\[webhook-sink\\] verified task.created subject=${taskUlid} webhook-id=msg_\\w+ → 204`))
  t.match(opsLines, new RegExp(`\\[webhook-sink\\] verified task.completed subject=${taskUlid} webhook-id=msg_\\w+ → 204`))
  t.notOk(session.out().split('\n').some((l) => l.startsWith('[webhook-sink] ') && l.includes('UNVERIFIED')), 'no delivery failed verification')

  // Pasted as a newcomer would: no webhook was refused (the sinks listened before anything was
  // sent), so the server logged no failed attempt, and each subject's webhooks arrived in order.
  t.notMatch(server.out(), /webhook attempt failed|webhook delivery failed/, 'no webhook attempt failed')
  const arrived = (re: RegExp) => [...session.out().matchAll(re)].map((m) => m[1]!)
  const shippedId = /"id":(\d+)[^\n]*"status":\{"code":"delivered"/.exec(delivery)?.[1]
  const shipmentEvents = arrived(new RegExp(`\\[webhook-sink\\] verified (\\w+) shipment_id=${shippedId} `, 'g'))
  t.same(shipmentEvents.filter((e, i) => shipmentEvents.indexOf(e) === i), ['new', 'ready_to_ship'], 'the carrier\'s webhooks for the shipment, in order')
  const taskEvents = arrived(new RegExp(`\\[webhook-sink\\] verified (task\\.\\w+) subject=${taskUlid} `, 'g'))
  t.same(taskEvents.filter((e, i) => taskEvents.indexOf(e) === i), ['task.created', 'task.started', 'task.arrived', 'task.completed'], 'the task\'s webhooks, in order (the complete recorded a skipped arrival; a redelivery aside)')
})
