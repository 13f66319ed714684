/**
 * `npm run audit-log -- <command>`: the audit tree from the operator's side. Configured from the
 * environment like the server (DATABASE_URL, EVENTSTORE_URL, DATA_DIR, NOTARY_KEY…). Without
 * DATABASE_URL it uses the embedded PostgreSQL: the running server's, else one it starts for its run.
 *
 *   check                                    recompute every leaf from the log; name what no longer matches
 *   export (--shipment <id> | --stream <stream-id>) --out <file>
 *                                            one history with its proofs and the signed head, for verify-history
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { loadConfig } from '../config.js'
import { openConfiguredDatabase } from '../infrastructure/database/configured-database.js'
import { migrateInfrastructure } from '../infrastructure/database/migrate.js'
import { createEventStore } from '../infrastructure/event-store/create-event-store.js'
import { readingThrough } from '../infrastructure/event-store/read-through.js'
import { checkAuditLog, type CheckReport } from '../audit/check.js'
import { type ConfiguredNotaryKey, configuredNotaryKey, GENERATED_KEY_FILE } from '../audit/configured-key.js'
import { latestHead } from '../audit/tree-store.js'
import { exportHistory } from '../audit/export-history.js'
import { keyIdOf, publicKeyFrom } from '../audit/tree-head.js'
import { readKnownHeads, storedTreeAgainst } from '../audit/known-head.js'
import { auditOriginOf } from '../audit/log-origin.js'
import { parseWitnesses } from '../audit/witness/witness-client.js'
import { Witnessing } from '../audit/witness/witnessing.js'
import type { Checkpoint } from '../audit/checkpoint-note.js'
import type { Kysely } from 'kysely'
import { stream } from '../../schemas/events/streams.js'
import { messageOf } from '../shared/thrown.js'

const usage = `usage: audit-log <command>

commands:
  check [--public-key <file>] [--known-heads <dir>]
        recompute the audit tree from the event log and name every event whose bytes no longer
        match its sealed leaf, every sealed event missing, reordered or inserted, and every signed
        head the sealed leaves no longer give; exit 1 when anything was found. It first names the
        key the signatures are checked with (key_id, and NOTARY_KEY, NOTARY_KEY_FILE, DATA_DIR or
        --public-key); when no head at all verifies under it, one KEY finding says "wrong key?".
        --known-heads: checkpoints kept outside the database (a webhook sink's directory, an
        auditor's files); the sealed tree must extend each one, else a KNOWN-HEAD finding
  export (--shipment <id> | --stream <stream-id>) --out <file>
        write one history with its inclusion proofs and the signed tree head to a JSON file,
        for \`npm run verify-history -- <file> --public-key <key file>\`
`

class UsageError extends Error {}

export function formatCheck(r: CheckReport): string {
  const lines = r.findings.map((f) => `${f.kind.toUpperCase().padEnd(9)} ${f.subject}: ${f.detail}`)
  const verified = r.keyId !== undefined ? ` (${r.verifiedHeads ?? 0} verify under key ${r.keyId})` : ''
  if (r.refusals > 0) lines.push(`the notary refused to seal ${r.refusals} time(s); last: ${r.lastRefusal ?? '?'}`)
  lines.push(`${r.events} events in the log, ${r.sealed} sealed (${r.unsealed} newer not yet), ${r.heads} signed heads${verified}: `
    + (r.findings.length === 0 ? 'every sealed event matches its leaf, and the leaves give every signed root' : `${r.findings.length} problem(s)`))
  return `${lines.join('\n')}\n`
}

async function withLog<T>(run: (deps: { db: Kysely<any>; store: Awaited<ReturnType<typeof createEventStore>>; config: ReturnType<typeof loadConfig> }) => Promise<T>): Promise<T> {
  const config = loadConfig()
  const { database } = await openConfiguredDatabase(config, { role: 'audit-log' })
  try {
    await migrateInfrastructure(database.db)
    const store = await createEventStore(config, database)
    try {
      return await run({ db: database.db, store, config })
    } finally {
      await store.close()
    }
  } finally {
    await database.close()
  }
}

/**
 * The key the export may seal and sign with (when no notary runs): never another than the last
 * head's. Run without the server's environment, the tool would sign heads that no auditor holding
 * the server's public key can check; it exports with the heads already signed instead.
 */
async function keyToSealWith(db: Kysely<any>, key: ConfiguredNotaryKey | undefined): Promise<ConfiguredNotaryKey | undefined> {
  const last = await latestHead(db)
  if (!key || !last || last.keyId === key.keyId) return key
  process.stderr.write(`wrong key? the notary key ${key.keyId} (key_id, from ${key.source}) is not the one the heads were signed with `
    + `(${last.keyId}): nothing new is sealed or signed. Run with the server's NOTARY_KEY, NOTARY_KEY_FILE or DATA_DIR\n`)
  return undefined
}

async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args
  if (command === 'check') {
    const { values } = parseArgs({ args: rest, options: { 'public-key': { type: 'string' }, 'known-heads': { type: 'string' } } })
    return withLog(async ({ db, store, config }) => {
      const file = values['public-key']
      const key = file ? { publicKey: publicKeyFrom(readFileSync(file, 'utf8')), source: `--public-key ${file}` } : configuredNotaryKey(config)
      // Said first: run without the server's environment, the tool may hold another key than the notary's.
      process.stdout.write(key
        ? `notary key ${keyIdOf(key.publicKey)} (key_id), from ${key.source}\n`
        : `no notary key found (NOTARY_KEY, NOTARY_KEY_FILE, or ${config.dataDir}/${GENERATED_KEY_FILE}): head signatures are not checked\n`)
      const report = await checkAuditLog(db, readingThrough(store, db, { asStored: true }), key?.publicKey, 5000, { lagSeconds: config.auditReadyLagSeconds })
      const dir = values['known-heads']
      if (dir) {
        if (!key) throw new UsageError('--known-heads needs the notary\'s public key (--public-key, or the server\'s NOTARY_KEY)\n')
        const kept = readKnownHeads(dir, key.publicKey)
        for (const k of kept) if (k.problem) report.findings.push({ kind: 'known-head', subject: k.file, detail: k.problem })
        const checkpoints = kept.flatMap((k) => (k.checkpoint ? [k.checkpoint] : []))
        const fileOf = new Map<Checkpoint, string>(kept.flatMap((k) => (k.checkpoint ? [[k.checkpoint, k.file] as const] : [])))
        for (const f of await storedTreeAgainst(db, checkpoints)) report.findings.push({ kind: 'known-head', subject: `${fileOf.get(f.checkpoint)} (size ${f.checkpoint.size})`, detail: f.problem })
        process.stdout.write(`${checkpoints.length} kept checkpoint(s) from ${dir}\n`)
      }
      process.stdout.write(formatCheck(report))
      return report.findings.length === 0 ? 0 : 1
    })
  }
  if (command === 'export') {
    const { values } = parseArgs({ args: rest, options: { shipment: { type: 'string' }, stream: { type: 'string' }, out: { type: 'string' } } })
    if (!values.out || (values.shipment === undefined) === (values.stream === undefined)) throw new UsageError(usage)
    if (values.shipment !== undefined && !/^\d+$/.test(values.shipment)) throw new UsageError(`--shipment must be a shipment id (a number)\n\n${usage}`)
    const streamId = values.stream ?? stream.shipment(values.shipment!)
    return withLog(async ({ db, store, config }) => {
      const key = await keyToSealWith(db, configuredNotaryKey(config))
      const witnesses = parseWitnesses(config.auditWitnesses)
      const doc = await exportHistory(db, store, key, streamId, key && witnesses.length > 0 ? new Witnessing(witnesses, auditOriginOf(config), key) : undefined)
      if (doc.events.length === 0) {
        process.stderr.write(`${streamId}: no such stream in the log\n`)
        return 1
      }
      writeFileSync(values.out!, `${JSON.stringify(doc, null, 2)}\n`)
      const unproven = doc.events.filter((e) => !e.proof).length
      process.stdout.write(`wrote ${doc.events.length} events of ${streamId} to ${values.out}`
        + (doc.tree_head ? ` with proofs against the tree head of size ${doc.tree_head.tree_size} signed at ${doc.tree_head.signed_at}` : ' (no tree head signed yet)')
        + (unproven ? `; ${unproven} without a proof` : '') + '\n')
      return 0
    })
  }
  throw new UsageError(usage)
}

try {
  process.exitCode = await main(process.argv.slice(2))
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(err.message)
    process.exitCode = 2
  } else {
    process.stderr.write(`audit-log: ${messageOf(err)}\n`)
    process.exitCode = 1
  }
}
