// Growth bench (issue 32 §3): the listings, GET by id, POST, the carrier feed and the rebuild with the
// log grown to 10k, 100k and 1M shipments of one organization (a contracted carrier + shipper pair),
// beside a Fastify hello-world measured in the same run.
//
//   bash test/bench/run-all.sh growth                       (GROWTH_SIZES=10000,100000,1000000 by default)
//   GROWTH_SIZES=1000,10000 bash test/bench/run-all.sh growth
//
// How the log is grown, without HTTP: two shipments are made through the API (one `service_routes`
// shipment, whose workflow makes a task, and one on the carrier's own `custom` hub, which feeds the
// carrier API), and every event each of them caused (its control-number reservation, ShipmentCreated,
// and for the first the workflow-start reservation, WorkflowCreated, WorkflowTaskCreated and
// TaskCreated) becomes a template. Seeded shipment g copies template g % 2 with INSERT … SELECT over
// generate_series, in batches, replacing in each event's stream id, data and metadata the template's
// ids (shipment, package and workflow ids drawn as the platform draws them: from the advanced
// sequences), ULIDs, event and request ids, timestamps, control number (a bijection of g over the
// 29^5 codes, never one already reserved), external reference and the workflow-start key's hash;
// es_streams gets one row per stream at its version. The server is stopped while the log grows; the
// relay's checkpoint is then moved to the log's head, i.e. the seeded events are marked as already
// relayed (JetStream never sees them, so the reactions that would have followed them, such as the
// expiry timers and the carrier notifications, are not there; their own events, the workflows and
// tasks, are seeded), while the audit notary seals them on the next start as it would have (the bench
// waits for it before measuring). The read models are built by the platform's rebuild CLI
// (src/cli/index.ts rebuild), whose rate is one of the figures.
import { randomBytes } from 'node:crypto'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import autocannon from 'autocannon'
import pg from 'pg'
import { freePort, HELLO, platformEnv, platformServerArgs, platformServerKind, startProcess, contractedPair, type Server } from './bench-server.js'
import { fmt, scratchDatabaseAt } from './bench-database.js'
import { CONNECTIONS, drained, type Figures, load, SECONDS, WARMUP } from './http-load.js'
import { runBench, sleep } from './bench-report.js'

const SIZES = (process.env['GROWTH_SIZES'] ?? '10000,100000,1000000').split(',').map((s) => Number(s.trim())).filter((n) => n > 0).sort((a, b) => a - b)
/** Shipments per INSERT … SELECT (one transaction each). */
const BATCH = Number(process.env['GROWTH_BATCH'] ?? 50_000)
/** The autocannon figures' requests are bounded in time (SECONDS) and each request in time too. */
const REQUEST_TIMEOUT_S = 10
const ADMIN_TOKEN = `adm_bench_${randomBytes(8).toString('hex')}`
const root = new URL('../../', import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), 'growth-bench-'))

// Distinctive sequence values for the templates, so that their ids are safe to replace as text.
const TEMPLATE_SEQ = { shipment_id_seq: 900_000_000, package_id_seq: 800_000_000, workflow_id_seq: 700_000_000 } as const
const CODES = 29 ** 5
const CODE_STEP = 7_368_787 // coprime with 29: k → k·STEP mod 29^5 is a bijection of the codes
const ALPHABET = '23456789ABCDEFGHJKMNPQRSTWXYZ'

const ADDRESS_A = { name: 'Depot', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR', phone: '+54 351 422 1234' }
const ADDRESS_B = { name: 'Ana Gómez', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR' }
const PACKAGES = [{ original_weight: 2.5, weight_unit: 'kg', length: 30, width: 20, height: 10 }]

interface TemplateEvent { streamId: string; streamType: string; streamVersion: number; type: string; schemaVersion: number; eventId: string; data: string; metadata: string; recordedAt: Date }
interface Template { events: TemplateEvent[]; shipmentId: number; packageIds: number[]; workflowIds: number[]; code: string; createdAt: number; reference: string }

const ULID_RE = /\b[0-9A-HJKMNP-TV-Z]{26}\b/g
const UUID_RE = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g
const TS_RE = /\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\b/g

type Row = Record<string, any>

async function main(): Promise<void> {
  const admin = process.env['BENCH_DATABASE_URL'] ?? process.env['DATABASE_URL']
  if (!admin) {
    console.log('DATABASE_URL not set: bash test/bench/run-all.sh growth')
    process.exit(2)
  }
  console.log(`growth bench: sizes ${SIZES.map((n) => fmt(n)).join(', ')}; autocannon ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${SECONDS} s measured; platform ${platformServerKind()}; bus ${process.env['NATS_URL'] ? 'NATS JetStream' : 'in-process'}`)
  const scratch = await scratchDatabaseAt(admin, 'growth')
  const pgc = new pg.Client({ connectionString: scratch.url })
  const helloPort = await freePort()
  const hello = await startProcess(work, 'hello', ['--input-type=module', '-e', HELLO], { PORT: String(helloPort) }, helloPort)
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const startPlatform = () => startProcess(work, 'platform', platformServerArgs(), platformEnv({ port, adminToken: ADMIN_TOKEN, dataDir: join(work, 'data'), databaseUrl: scratch.url }), port)
  let server: Server | undefined = await startPlatform()
  const results = new Map<number, Map<string, Figures | string>>()
  const seeding: string[] = []
  try {
    await pgc.connect()
    const { carrier, shipper } = await contractedPair(base, ADMIN_TOKEN, { carriers_enabled: true })
    const carrierId: string = carrier.organization.id
    const asShipper = { authorization: `Bearer ${shipper.access_token}`, 'content-type': 'application/json' }
    const asCarrier = { authorization: `Bearer ${carrier.access_token}`, 'content-type': 'application/json' }
    // The carrier's own hub with a service type, public and certified so the shipper may use it
    // under the contract: its shipments are the carrier feed's.
    const hubRes = await fetch(`${base}/api/v1/carriers`, { method: 'POST', headers: asCarrier, body: JSON.stringify({ name: 'Growth Hub', integration: 'custom', visibility: 'public', service_types: [{ code: 'express', name: 'Express' }] }) })
    if (hubRes.status !== 201) throw new Error(`POST /carriers: ${hubRes.status} ${await hubRes.text()}`)
    const hub = await hubRes.json() as any
    const feedKey: string = hub.api_key
    const certified = await fetch(`${base}/admin/v1/carriers/${hub.carrier.id}/certification`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ status: 'certified' }) })
    if (certified.status >= 300) throw new Error(`certification: ${certified.status} ${await certified.text()}`)

    for (const [seq, v] of Object.entries(TEMPLATE_SEQ)) await pgc.query(`select setval('${seq}', ${v})`)
    const post = async (headers: Record<string, string>, body: unknown) => {
      const r = await fetch(`${base}/api/v1/shipments`, { method: 'POST', headers, body: JSON.stringify(body) })
      if (r.status !== 201) throw new Error(`POST /shipments: ${r.status} ${await r.text()}`)
      return (await r.json() as any).shipment
    }
    const headOf = async () => Number((await pgc.query('select coalesce(max(global_position), 0) as p from es_events')).rows[0].p)
    const countType = async (type: string) => Number((await pgc.query('select count(*) as n from es_events where type = $1', [type])).rows[0].n)
    // Until the reactions to a POST have appended what they append (the workflow and its task).
    const settled = async (tasks: number) => {
      for (const deadline = Date.now() + 60_000; (await countType('TaskCreated')) < tasks;) {
        if (Date.now() > deadline) throw new Error('the shipment workflow made no task within 60 s')
        await sleep(100)
      }
      await drained(base)
    }
    // A consumer skips what the log held before its first start (src/processes/consumer-start.ts):
    // the shipment workflows' must have started before the first shipment.
    for (const deadline = Date.now() + 60_000; !(await pgc.query(`select 1 from bus_consumer_start_positions where consumer = 'service-routes-shipments'`)).rowCount;) {
      if (Date.now() > deadline) throw new Error('the service-routes-shipments consumer did not start within 60 s')
      await sleep(100)
    }
    // The first shipment also makes the carrier's default blueprints: not a template.
    await post(asShipper, { carrier_id: carrierId, origin: ADDRESS_A, destination: ADDRESS_B, packages: PACKAGES })
    await settled(1)
    const capture = async (from: number, reference: string): Promise<Template> => {
      const rows = (await pgc.query(`select e.stream_id, s.stream_type, e.stream_version, e.type, e.schema_version, e.event_id::text, e.data::text, e.metadata::text, e.recorded_at
        from es_events e join es_streams s using (stream_id) where e.global_position > $1 order by e.global_position`, [from])).rows
      const events = rows.map((r: Row) => ({ streamId: r.stream_id, streamType: r.stream_type, streamVersion: Number(r.stream_version), type: r.type, schemaVersion: r.schema_version, eventId: r.event_id, data: r.data, metadata: r.metadata, recordedAt: r.recorded_at }))
      const created = JSON.parse(events.find((e) => e.type === 'ShipmentCreated')!.data)
      const workflowIds = [...new Set(events.map((e) => /^workflow-(\d+)$/.exec(e.streamId)?.[1]).filter((w) => w !== undefined).map(Number))]
      return { events, shipmentId: created.id, packageIds: created.packages.map((p: any) => p.id), workflowIds, code: created.control_number, createdAt: Date.parse(created.created_at), reference }
    }
    let from = await headOf()
    await post(asShipper, { carrier_id: carrierId, external_reference: 'GROWTH-TEMPLATE-A', origin: ADDRESS_A, destination: ADDRESS_B, packages: PACKAGES })
    await settled(2)
    const routed = await capture(from, 'GROWTH-TEMPLATE-A')
    from = await headOf()
    await post(asShipper, { carrier_id: carrierId, service_type_code: 'express', external_reference: 'GROWTH-TEMPLATE-B', origin: ADDRESS_A, destination: ADDRESS_B, packages: PACKAGES })
    await sleep(500)
    await drained(base)
    const hubbed = await capture(from, 'GROWTH-TEMPLATE-B')
    const templates = [routed, hubbed]
    for (const [name, t] of [['service_routes', routed], ['custom hub', hubbed]] as const) {
      console.log(`template ${name}: ${t.events.map((e) => `${e.type} (${e.streamId.replace(/-[^-]*$/, '-…')})`).join(', ')}`)
    }
    if (!routed.events.some((e) => e.type === 'TaskCreated')) throw new Error('the service_routes template has no task')
    // One package and at most one workflow per template: each seeded shipment draws one of each.
    if (templates.some((t) => t.packageIds.length !== 1 || t.workflowIds.length > 1)) throw new Error('a template has more than one package or workflow')

    await checkTemplateIds(pgc, templates)
    let seeded = 0
    let firstSeededId = 0
    const maxSize = SIZES.at(-1)!
    // Seeded shipments are dated in the last 5 days (the newest a minute before the templates), so
    // none would yet have expired (SHIPMENT_EXPIRY_HOURS, 168 by default).
    const spacingMs = Math.min(1000, (5 * 86_400_000) / maxSize)
    const t0 = Math.min(routed.createdAt, hubbed.createdAt) - 60_000 - maxSize * spacingMs

    for (const size of SIZES) {
      const row = new Map<string, Figures | string>()
      results.set(size, row)
      // Everything published and projected, then the server stops while the log grows.
      await drained(base)
      await server!.stop()
      server = undefined
      const started = performance.now()
      const ids = await seed(pgc, templates, carrierId, seeded, size, t0, spacingMs)
      if (!firstSeededId) firstSeededId = ids.firstShipmentId
      const seedSeconds = (performance.now() - started) / 1000
      const events = Number((await pgc.query('select count(*) as n from es_events').then((r) => r.rows[0])).n)
      const relayed = await markRelayed(pgc)
      seeding.push(`${fmt(size)}: seeded ${fmt(size - seeded)} shipments (${fmt(ids.events)} events) in ${seedSeconds.toFixed(1)} s (${fmt(ids.events / seedSeconds)} events/s); log now ${fmt(events)} events; relay checkpoint moved to ${relayed}`)
      console.log(seeding.at(-1))
      seeded = size
      const rebuilt = await rebuild(scratch.url)
      console.log(`  rebuild: ${rebuilt.line}`)
      row.set('rebuild (events/s)', fmt(rebuilt.rate))
      const vacuumStarted = performance.now()
      await pgc.query('vacuum analyze')
      console.log(`  vacuum analyze: ${((performance.now() - vacuumStarted) / 1000).toFixed(1)} s`)
      console.log(`  ${await footprint(pgc, size)}`)

      server = await startPlatform()
      const notarySeconds = await notaryCaughtUp(pgc)
      console.log(`  the audit notary sealed the seeded events in ${notarySeconds.toFixed(1)} s`)
      await drained(base)
      if (size === SIZES[0]) await verify(base, pgc, asShipper, carrierId, firstSeededId, ids.lastShipmentId)

      row.set('hello-world GET /', await load({ url: `http://127.0.0.1:${helloPort}/` }))
      const getJson = async (url: string, headers: Record<string, string>) => {
        const r = await fetch(url, { headers })
        if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${(await r.text()).slice(0, 300)}`)
        return r.json() as Promise<any>
      }
      const measureGet = async (name: string, url: string, headers: Record<string, string>) => {
        await quiet(pgc, name)
        try {
          const f = await load({ url, headers, timeout: REQUEST_TIMEOUT_S })
          row.set(name, f)
        } catch (err) { row.set(name, `failed: ${(err as Error).message}`) }
      }
      const listing = async (prefix: string, path: string, headers: Record<string, string>) => {
        // The page's links and meta, at the root or under the listing's name (`{ shipments: { data, links, meta } }`).
        const paged = (body: any): any => (body?.meta ? body : Object.values(body ?? {}).find((v: any) => v?.meta) ?? {})
        const first = paged(await getJson(`${base}${path}`, headers))
        await measureGet(`${prefix} page 1`, `${base}${path}`, headers)
        const last = Number(first.meta?.last_page ?? 1)
        const sep = path.includes('?') ? '&' : '?'
        await measureGet(`${prefix} page=${last > 1 ? 'last' : '1 (one page)'}`, `${base}${path}${sep}page=${last}`, headers)
        // A cursor, where the listing gives one: links.next of the page before the last.
        const before = last > 1 ? paged(await getJson(`${base}${path}${sep}page=${last - 1}`, headers)) : first
        const next: string | null = before.links?.next ?? null
        if (next && /cursor=/.test(next)) {
          const u = new URL(next)
          await measureGet(`${prefix} deep links.next (cursor)`, `${base}${u.pathname}${u.search}`, headers)
        }
      }
      await listing('GET /api/v1/shipments', '/api/v1/shipments', asShipper)
      const seededStatus = (await getJson(`${base}/api/v1/shipments/${firstSeededId}`, asShipper)).status
      const status: string = typeof seededStatus === 'object' ? seededStatus.code : seededStatus
      await measureGet(`GET /api/v1/shipments?status=${status}`, `${base}/api/v1/shipments?status=${status}`, asShipper)
      // GET by id over the seeded shipments, a random one per request (the cache sees the whole range).
      const lo = firstSeededId
      const span = ids.lastShipmentId - lo + 1
      await quiet(pgc, 'GET by id')
      const byId = async (name: string, from: number, count: number) => {
        const before = await bufferReads(pgc)
        try {
          row.set(name, await load({
            url: `${base}/api/v1/shipments/${from}`, headers: asShipper, timeout: REQUEST_TIMEOUT_S,
            requests: [{ setupRequest: (req: any) => ({ ...req, path: `/api/v1/shipments/${from + Math.floor(Math.random() * count)}` }) }],
          } as autocannon.Options))
        } catch (err) { row.set(name, `failed: ${(err as Error).message}`) }
        const after = await bufferReads(pgc)
        const hit = after.hit - before.hit; const read = after.read - before.read
        console.log(`  ${name}: shipments' pages from shared_buffers ${hit + read > 0 ? ((100 * hit) / (hit + read)).toFixed(1) : '-'} % (${fmt(read)} read from the OS)`)
      }
      await byId('GET /api/v1/shipments/{id} (random seeded)', lo, span)
      // The newest 2,000: what integrators poll (a shipment in flight), within the view cache's default 4,000.
      const hot = Math.min(2_000, span)
      await byId('GET /api/v1/shipments/{id} (random of newest 2k)', ids.lastShipmentId - hot + 1, hot)
      const postBody = JSON.stringify({ carrier_id: carrierId, origin: ADDRESS_A, destination: ADDRESS_B, packages: PACKAGES })
      await quiet(pgc, 'POST')
      row.set('POST /api/v1/shipments', await load({ url: `${base}/api/v1/shipments`, method: 'POST', headers: asShipper, body: postBody, timeout: REQUEST_TIMEOUT_S }))
      await drained(base, 600_000)
      // The carrier feed from the middle of the seeded shipments: updated_since, then its next cursor.
      const middle = new Date(t0 + (size / 2) * spacingMs).toISOString()
      const feedHeaders = { authorization: `Bearer ${feedKey}` }
      const feed = await getJson(`${base}/carrier/v1/shipments?updated_since=${encodeURIComponent(middle)}`, feedHeaders)
      await measureGet('GET /carrier/v1/shipments?updated_since=mid', `${base}/carrier/v1/shipments?updated_since=${encodeURIComponent(middle)}`, feedHeaders)
      await measureGet('GET /carrier/v1/shipments?cursor=(deep)', `${base}/carrier/v1/shipments?cursor=${encodeURIComponent(feed.meta.next_cursor)}`, feedHeaders)
      await listing('GET /api/v1/tasks', '/api/v1/tasks', asCarrier)
      printTable(results)
    }
  } catch (err) {
    const log = join(work, 'platform.log')
    try { console.error(`platform.log (tail):\n${readFileSync(log, 'utf8').split('\n').filter((l) => !l.includes('request completed') && !l.includes('incoming request')).slice(-30).join('\n')}`) } catch { /* none */ }
    throw err
  } finally {
    await server?.stop()
    await hello.stop()
    await pgc.end().catch(() => undefined)
    // GROWTH_KEEP_DATABASE=1 leaves the grown database in place (to profile a rebuild on it again).
    if (process.env['GROWTH_KEEP_DATABASE'] === '1') console.log(`database kept: ${scratch.url}`)
    else await scratch.drop()
    rmSync(work, { recursive: true, force: true })
  }
  console.log('\nseeding:')
  for (const s of seeding) console.log(`  ${s}`)
}

/** The template ids the seeding replaces as text must each be distinctive (drawn from the advanced sequences). */
async function checkTemplateIds(pgc: pg.Client, templates: Template[]): Promise<void> {
  for (const t of templates) {
    const check = (what: string, n: number, floor: number) => { if (!(n > floor && n < floor + 100_000)) throw new Error(`template ${what} ${n} is not from the advanced sequence (> ${floor})`) }
    check('shipment id', t.shipmentId, TEMPLATE_SEQ.shipment_id_seq)
    for (const p of t.packageIds) check('package id', p, TEMPLATE_SEQ.package_id_seq)
    for (const w of t.workflowIds) check('workflow id', w, TEMPLATE_SEQ.workflow_id_seq)
    for (const e of t.events.filter((x) => x.streamId.startsWith('workflow-start-'))) {
      const h = (await pgc.query(`select ${startKeyHash('$1::bigint')} as h`, [t.shipmentId])).rows[0].h
      if (e.streamId !== `workflow-start-${h}`) throw new Error(`the workflow-start stream ${e.streamId} is not named by the key the bench computes (${h})`)
    }
  }
}

const startKeyHash = (sid: string) => `left(encode(sha256(convert_to('shipment:' || ${sid} || ':start-workflow', 'UTF8')), 'hex'), 32)`

/** An SQL text literal. */
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`

/**
 * Appends shipments `from`+1 … `to` (templates alternating), in batches of BATCH, each one
 * INSERT … SELECT into a temporary table, then into es_events in (g, event) order and es_streams.
 */
async function seed(pgc: pg.Client, templates: Template[], carrierId: string, from: number, to: number, t0: number, spacingMs: number) {
  const count = to - from
  // Ids from the platform's sequences, as its POSTs draw them (one block for the whole growth).
  const seqBase: Record<string, number> = {}
  for (const seq of ['shipment_id_seq', 'package_id_seq', 'workflow_id_seq']) {
    seqBase[seq] = Number((await pgc.query(`select last_value from ${seq}`)).rows[0].last_value)
    await pgc.query(`select setval('${seq}', ${seqBase[seq]! + count})`)
  }
  const sid = 'b.sid'
  // Crockford base 32 of n in len characters (ULIDs), and the control number of k (5 of the 29 symbols), unrolled.
  const b32 = (n: string, len: number) => Array.from({ length: len }, (_, i) =>
    `substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((${n} >> ${5 * (len - 1 - i)}) & 31)::int + 1, 1)`).join(' || ')
  const code = (k: string) => Array.from({ length: 5 }, (_, i) =>
    `substr('${ALPHABET}', (((${k} * ${CODE_STEP}::bigint) % ${CODES}) / ${29 ** (4 - i)} % 29)::int + 1, 1)`).join(' || ')
  // Each template's replacements: the template's text → an SQL expression over the batch row b,
  // computed once per shipment into the batch table (column v<ti>_<k>) and used by all its events.
  const eventIds = templates.map((t) => t.events.map((e) => e.eventId))
  const replacements = templates.map((t, ti) => {
    const all = t.events.map((e) => `${e.streamId} ${e.data} ${e.metadata}`).join(' ')
    const pairs: [string, string][] = []
    pairs.push([String(t.shipmentId), `${sid}::text`])
    t.packageIds.forEach((p) => pairs.push([String(p), 'b.pid::text']))
    t.workflowIds.forEach((w) => pairs.push([String(w), 'b.wid::text']))
    const ulids = [...new Set(all.match(ULID_RE) ?? [])]
    ulids.forEach((u, i) => pairs.push([u, `${b32(`(b.tms + ${Date.parse(decodeUlidTime(u)) - t.createdAt})`, 10)} || ${lit(b32Js(ti * 32 + i, 4))} || ${b32('b.g', 12)}`]))
    for (const u of new Set(all.match(UUID_RE) ?? [])) {
      const k = eventIds[ti]!.indexOf(u)
      pairs.push([u, k >= 0 ? `md5('growth-event-' || ${sid} || '-' || ${k})::uuid::text` : `md5(${lit(u)} || ${sid})::uuid::text`])
    }
    for (const ts of new Set(all.match(TS_RE) ?? [])) {
      pairs.push([ts, `to_char((b.t + interval '1 millisecond' * ${Date.parse(ts) - t.createdAt}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`])
    }
    for (const h of t.events.filter((e) => e.streamId.startsWith('workflow-start-')).map((e) => e.streamId.slice('workflow-start-'.length))) pairs.push([h, startKeyHash(sid)])
    pairs.push([`"${t.code}`, `'"' || b.code`], [`-${t.code}`, `'-' || b.code`], [t.reference, `'GROWTH-' || ${sid}`])
    return pairs.map(([from, expr], k) => ({ from, expr, column: `v${ti}_${k}` }))
  })
  const transform = (ti: number, expr: string) => replacements[ti]!.reduce((acc, r) => `replace(${acc}, ${lit(r.from)}, b.${r.column})`, expr)
  const caseOf = (expr: string) => `case b.tpl ${templates.map((_, ti) => `when ${ti} then ${transform(ti, expr)}`).join(' ')} end`
  // Template events as a VALUES list: (tpl, ord, stream_id, stream_type, stream_version, type, schema_version, data, metadata, recorded offset ms).
  const values = templates.flatMap((t, ti) => t.events.map((e, k) =>
    `(${ti}, ${k}, ${lit(e.streamId)}, ${lit(e.streamType)}, ${e.streamVersion}, ${lit(e.type)}, ${e.schemaVersion}, ${lit(e.data)}, ${lit(e.metadata)}, ${e.recordedAt.getTime() - t.createdAt})`))
  await pgc.query('drop table if exists pg_temp.growth_tpl')
  await pgc.query(`create temporary table growth_tpl (tpl int, ord int, stream_id text, stream_type text, stream_version bigint, type text, schema_version int, data text, metadata text, recorded_ms bigint)`)
  await pgc.query(`insert into growth_tpl values ${values.join(', ')}`)
  const controlPrefix = `control-number-${carrierId}-`
  let events = 0
  for (let lo = from + 1; lo <= to; lo += BATCH) {
    const hi = Math.min(to, lo + BATCH - 1)
    await pgc.query('begin')
    // One row per seeded shipment: its template, ids, time, control number (the second choice when
    // the first is taken) and every replacement of its template.
    await pgc.query(`create temporary table growth_batch on commit drop as
      select b.*, ${replacements.flatMap((rs, ti) => rs.map((r) => `case when b.tpl = ${ti} then ${r.expr} end as ${r.column}`)).join(', ')}
      from (
        select a.*, (extract(epoch from a.t) * 1000)::bigint as tms,
          case when exists (select 1 from es_streams s where s.stream_id = ${lit(controlPrefix)} || ${code('a.g')}) then ${code('(a.g + 10000000)')} else ${code('a.g')} end as code
        from (
          select g, (g % ${templates.length})::int as tpl,
            timestamptz 'epoch' + interval '1 millisecond' * (${t0}::bigint + (g * ${spacingMs})::bigint) as t,
            ${seqBase['shipment_id_seq']}::bigint + g - ${from} as sid, ${seqBase['package_id_seq']}::bigint + g - ${from} as pid,
            ${seqBase['workflow_id_seq']}::bigint + g - ${from} as wid
          from generate_series(${lo}::bigint, ${hi}::bigint) g
        ) a
      ) b`)
    await pgc.query(`
      with rows as (
        select b.g, e.ord, e.stream_type, e.stream_version, e.type, e.schema_version,
          ${caseOf('e.stream_id')} as stream_id, ${caseOf('e.data')} as data, ${caseOf('e.metadata')} as metadata,
          md5('growth-event-' || ${sid} || '-' || e.ord)::uuid as event_id,
          b.t + interval '1 millisecond' * e.recorded_ms as recorded_at
        from growth_batch b join growth_tpl e on e.tpl = b.tpl
      ), ins as (
        insert into es_events (stream_id, stream_version, event_id, type, schema_version, data, metadata, recorded_at)
        select stream_id, stream_version, event_id, type, schema_version, data::jsonb, metadata::jsonb, recorded_at from rows order by g, ord
      )
      insert into es_streams (stream_id, stream_type, version, created_at, updated_at)
      select stream_id, min(stream_type), max(stream_version), min(recorded_at), max(recorded_at) from rows group by stream_id`)
    events += Number((await pgc.query(`select count(*) as n from growth_batch b join growth_tpl e on e.tpl = b.tpl`)).rows[0].n)
    await pgc.query('commit')
  }
  return { events, firstShipmentId: seqBase['shipment_id_seq']! + 1, lastShipmentId: seqBase['shipment_id_seq']! + count }
}

/** n in Crockford base 32, len characters. */
function b32Js(n: number, len: number): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
  let out = ''
  for (let i = len - 1; i >= 0; i--) out += alphabet[Math.floor(n / 32 ** i) % 32]
  return out
}

/** The ISO time of a ULID's first 10 characters. */
function decodeUlidTime(u: string): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
  let ms = 0
  for (const c of u.slice(0, 10)) ms = ms * 32 + alphabet.indexOf(c)
  return new Date(ms).toISOString()
}

/** The seeded events are marked as relayed: the relay's checkpoint moves to the log's head. */
async function markRelayed(pgc: pg.Client): Promise<string> {
  const head = (await pgc.query(`select transaction_id::text || '/' || global_position as p from es_events order by transaction_id desc, global_position desc limit 1`)).rows[0].p
  const r = await pgc.query(`update bus_relay_checkpoints set checkpoint = $1, owner = null, lease_until = null, updated_at = now() where name = 'main'`, [head])
  if (r.rowCount !== 1) throw new Error('no relay checkpoint named main')
  return head
}

/** The platform's rebuild CLI on the database; its own line and rate. */
async function rebuild(url: string): Promise<{ line: string; rate: number }> {
  // GROWTH_REBUILD_PROFILE=<dir> writes the rebuild's V8 CPU profile there (node --cpu-prof).
  const profile = process.env['GROWTH_REBUILD_PROFILE'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['GROWTH_REBUILD_PROFILE']}`] : []
  const args = [...profile, ...(process.env['BENCH_DIST'] === '1' ? [join(root, 'dist/src/cli/index.js'), 'rebuild'] : ['--import', 'tsx', 'src/cli/index.ts', 'rebuild'])]
  const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: root, env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' }, maxBuffer: 64 * 1024 * 1024, timeout: 3_600_000 })
  const line = stdout.trim().split('\n').at(-1) ?? ''
  const m = /\((\d+) events\/s\)/.exec(line)
  if (!m) throw new Error(`rebuild printed no rate: ${stdout}`)
  return { line, rate: Number(m[1]) }
}

/**
 * Waits (up to 2 min) until no statement of an earlier figure still runs in the database: a request
 * that timed out at the client keeps running there (issue 32 §2) and would slow the next figure.
 */
async function quiet(pgc: pg.Client, next: string, limitMs = 120_000): Promise<void> {
  const started = performance.now()
  for (;;) {
    const n = Number((await pgc.query(`select count(*) as n from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid() and now() - query_start > interval '50 milliseconds'`)).rows[0].n)
    if (n === 0) break
    if (performance.now() - started > limitMs) { console.log(`  before ${next}: ${n} statements still running after ${limitMs / 1000} s; measuring anyway`); return }
    await sleep(250)
  }
  const waited = (performance.now() - started) / 1000
  if (waited > 1) console.log(`  before ${next}: waited ${waited.toFixed(1)} s for the earlier figure's statements to finish`)
}

/** Pages of the read model's shipments (heap and indexes) found in shared_buffers, and read from the OS, so far. */
async function bufferReads(pgc: pg.Client): Promise<{ hit: number; read: number }> {
  const r = (await pgc.query(`select coalesce(sum(coalesce(heap_blks_hit, 0) + coalesce(idx_blks_hit, 0)), 0) as hit,
    coalesce(sum(coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0)), 0) as read
    from pg_statio_all_tables where schemaname = 'read_model' and relname = 'shipments'`)).rows[0]
  return { hit: Number(r.hit), read: Number(r.read) }
}

/**
 * What N shipments take on disk: the read model's shipments (heap, TOAST, indexes), its listing
 * rows, the read model in all and the event log, in total and per shipment; the basis of the README's
 * shared_buffers rule ("Running in production").
 */
async function footprint(pgc: pg.Client, shipments: number): Promise<string> {
  const size = async (sqlText: string) => Number((await pgc.query(sqlText)).rows[0].b)
  const rel = (name: string) => size(`select coalesce(pg_total_relation_size(to_regclass('${name}')), 0) as b`)
  const rows = await rel('read_model.shipments')
  const listings = await rel('read_model.shipment_listings')
  const readModel = await size(`select coalesce(sum(pg_total_relation_size(c.oid)), 0) as b from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'read_model' and c.relkind in ('r', 'm')`)
  const log = await rel('es_events')
  const buffers = (await pgc.query('show shared_buffers')).rows[0].shared_buffers as string
  const mb = (b: number) => `${fmt(b / 2 ** 20)} MB`
  const per = (b: number) => `${fmt(b / shipments)} B`
  return `footprint at ${fmt(shipments)}: shipments ${mb(rows)} (${per(rows)}/shipment), shipment_listings ${mb(listings)} (${per(listings)}), read model ${mb(readModel)} (${per(readModel)}), event log ${mb(log)} (${per(log)}); shared_buffers ${buffers}`
}

/** Waits until the audit notary has sealed the whole log; its seconds. */
async function notaryCaughtUp(pgc: pg.Client, limitMs = 1_800_000): Promise<number> {
  const started = performance.now()
  const total = Number((await pgc.query('select count(*) as n from es_events')).rows[0].n)
  for (;;) {
    const size = Number((await pgc.query(`select coalesce(max(tree_size), 0) as n from audit_notary`)).rows[0].n)
    if (size >= total) return (performance.now() - started) / 1000
    if (performance.now() - started > limitMs) throw new Error(`the notary sealed ${size} of ${total} events in ${limitMs} ms`)
    await sleep(500)
  }
}

/** What was seeded reads back as the platform's own: a seeded shipment, its events and task, unique codes, and a POST. */
async function verify(base: string, pgc: pg.Client, asShipper: Record<string, string>, carrierId: string, first: number, last: number): Promise<void> {
  for (const id of [first, last]) {
    const r = await fetch(`${base}/api/v1/shipments/${id}`, { headers: asShipper })
    if (r.status !== 200) throw new Error(`GET seeded shipment ${id}: ${r.status} ${await r.text()}`)
    const s = await r.json() as any
    const ev = await fetch(`${base}/api/v1/shipments/${id}/events`, { headers: asShipper })
    if (ev.status !== 200) throw new Error(`GET seeded shipment ${id}/events: ${ev.status} ${await ev.text()}`)
    const evs = await ev.json() as any
    console.log(`  verify: GET /shipments/${id} 200 (control number ${s.control_number}, status ${JSON.stringify(s.status)}, external reference ${s.external_reference}); /events 200: ${JSON.stringify(evs).slice(0, 160)}…`)
  }
  const codes = (await pgc.query(`select count(*) as n, count(distinct data->>'control_number') as d from es_events where type = 'ShipmentCreated' and data->'carrier'->>'id' = $1`, [carrierId])).rows[0]
  const streams = Number((await pgc.query(`select count(*) as n from es_streams where stream_id like $1`, [`control-number-${carrierId}-%`])).rows[0].n)
  if (Number(codes.n) !== Number(codes.d) || streams !== Number(codes.n)) throw new Error(`control numbers: ${codes.n} shipments, ${codes.d} distinct codes, ${streams} reservation streams`)
  console.log(`  verify: ${fmt(Number(codes.n))} shipments of the carrier, ${fmt(Number(codes.d))} distinct control numbers, ${fmt(streams)} reservation streams (es_streams' primary key is the unique index)`)
  const tasks = Number((await pgc.query(`select count(*) as n from read_model.tasks`)).rows[0].n)
  const r = await fetch(`${base}/api/v1/shipments`, { method: 'POST', headers: asShipper, body: JSON.stringify({ carrier_id: carrierId, origin: ADDRESS_A, destination: ADDRESS_B, packages: PACKAGES }) })
  if (r.status !== 201) throw new Error(`POST after seeding: ${r.status} ${await r.text()}`)
  const made = (await r.json() as any).shipment
  if (made.id <= last) throw new Error(`POST after seeding drew id ${made.id}, not above the seeded ${last}`)
  console.log(`  verify: ${fmt(tasks)} tasks in the read model; POST after seeding 201 (id ${made.id}, control number ${made.control_number})`)
}

const cell = (f: Figures | string | undefined) => {
  if (f === undefined) return ''
  if (typeof f === 'string') return f
  return `${fmt(f.rps)} req/s p50 ${f.p50} p99 ${f.p99}${f.non2xx || f.errors ? ` (non-2xx ${f.codes ?? f.non2xx}, errors ${f.errors})` : ''}`
}

function printTable(results: Map<number, Map<string, Figures | string>>): void {
  const sizes = [...results.keys()]
  const names: string[] = []
  for (const row of results.values()) for (const k of row.keys()) if (!names.includes(k)) names.push(k)
  names.push('GET by id / hello-world')
  const ratio = (size: number) => {
    const row = results.get(size)!
    const h = row.get('hello-world GET /'); const g = row.get('GET /api/v1/shipments/{id} (random seeded)')
    return typeof h === 'object' && typeof g === 'object' ? `${(g.rps / h.rps).toFixed(2)}×` : ''
  }
  const cells = names.map((n) => sizes.map((s) => (n === 'GET by id / hello-world' ? ratio(s) : cell(results.get(s)!.get(n)))))
  const width = Math.max(...cells.flat().map((c) => c.length), 12)
  const nameWidth = Math.max(...names.map((n) => n.length))
  console.log(`\n${'figure (ms)'.padEnd(nameWidth)} | ${sizes.map((s) => `${fmt(s)} shipments`.padEnd(width)).join(' | ')}`)
  console.log(`${'-'.repeat(nameWidth)}-|-${sizes.map(() => '-'.repeat(width)).join('-|-')}`)
  names.forEach((n, i) => console.log(`${n.padEnd(nameWidth)} | ${cells[i]!.map((c) => c.padEnd(width)).join(' | ')}`))
}

runBench(main)
