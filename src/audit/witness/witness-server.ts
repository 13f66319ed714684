import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync, openSync, fsyncSync, closeSync } from 'node:fs'
import { dirname } from 'node:path'
import http from 'node:http'
import { verifyConsistency } from '../merkle-verify.js'
import { checkpointText, cosignatureLine, type CosignerKey, openCheckpoint, parseCheckpointText } from '../checkpoint-note.js'
import { NoteError, parseNote, parseVerifierKey, type VerifierKey, ALG_ED25519 } from '../signed-note.js'
import { listenOn, readBodyText } from '../../shared/plain-http.js'
import { messageOf } from '../../shared/thrown.js'

/**
 * A C2SP tlog-witness (https://c2sp.org/tlog-witness) anyone can host: `POST /add-checkpoint` with
 * `old <size>`, a consistency proof and a checkpoint note. For each log it knows (by origin, with
 * the log's verifier key) it keeps the last checkpoint it cosigned in a state file, written and
 * synced before it answers, and cosigns a new one only when it extends that one. The checks and the
 * write run one request at a time, so two requests never roll each other back.
 */

export interface WitnessedLog {
  /** The log's verifier key (`<origin>+<hash>+<key>`, as `GET /audit/v1/checkpoint/key` serves it). */
  vkey: string
  size: number
  /** base64; absent while nothing was cosigned. */
  root_hash?: string
  /** The last cosigned checkpoint with its log signature and this witness's cosignature. */
  checkpoint?: string
}

export interface WitnessState { logs: Record<string, WitnessedLog> }

export interface WitnessOptions {
  key: CosignerKey
  /** Where the state lives (JSON); created on the first cosignature. */
  stateFile: string
  /** Logs to witness, as verifier keys; ones already in the state file are kept (their key must not change). */
  logs: string[]
  port: number
  host?: string
  now?: () => number
  log?: (line: string) => void
}

export interface WitnessServer {
  url: string
  port: number
  state(): WitnessState
  close(): Promise<void>
}

const MAX_BODY = 64 * 1024
const MAX_PROOF = 63

class Refusal extends Error {
  constructor(readonly status: number, message: string, readonly body?: string) { super(message) }
}

export function readWitnessState(file: string): WitnessState {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as WitnessState
    if (typeof parsed !== 'object' || parsed === null || typeof parsed.logs !== 'object') throw new Error('no `logs`')
    return parsed
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { logs: {} }
    throw new Error(`the witness state ${file} is unreadable: ${messageOf(err)}`)
  }
}

function writeDurably(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true })
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(tmp, text, { mode: 0o600 })
  const fd = openSync(tmp, 'r')
  try { fsyncSync(fd) } finally { closeSync(fd) }
  renameSync(tmp, file)
}

/** Request body → old size, proof, checkpoint note (400 when malformed). */
export function parseAddCheckpoint(body: string): { oldSize: number; proof: Buffer[]; note: string } {
  const bad = (why: string) => new Refusal(400, `bad request: ${why}`)
  const blank = body.indexOf('\n\n')
  if (blank < 0) throw bad('no empty line before the checkpoint')
  const lines = body.slice(0, blank).split('\n')
  const m = /^old (0|[1-9]\d{0,15})$/.exec(lines[0] ?? '')
  if (!m) throw bad('the first line must be `old <size>`')
  const proofLines = lines.slice(1)
  if (proofLines.length > MAX_PROOF) throw bad(`more than ${MAX_PROOF} consistency proof lines`)
  const proof = proofLines.map((l, i) => {
    const h = Buffer.from(l, 'base64')
    if (h.length !== 32 || h.toString('base64') !== l) throw bad(`proof line ${i + 1} is not a base64 hash`)
    return h
  })
  return { oldSize: Number(m[1]), proof, note: body.slice(blank + 2) }
}

export async function startWitness(opts: WitnessOptions): Promise<WitnessServer> {
  const now = opts.now ?? (() => Math.floor(Date.now() / 1000))
  const log = opts.log ?? (() => undefined)
  const state = readWitnessState(opts.stateFile)
  const keys = new Map<string, VerifierKey>()
  for (const vkey of [...Object.values(state.logs).map((l) => l.vkey), ...opts.logs]) {
    const key = parseVerifierKey(vkey, [ALG_ED25519])
    const kept = state.logs[key.name]
    if (kept && kept.vkey !== vkey) throw new Error(`the log ${key.name} was witnessed with the key ${kept.vkey}, not ${vkey}: a log's key does not change under a witness`)
    keys.set(key.name, key)
    state.logs[key.name] ??= { vkey, size: 0 }
  }

  /** The checks of tlog-witness, in its order; returns the cosignature line, or throws a Refusal. */
  function add(body: string): string {
    const { oldSize, proof, note } = parseAddCheckpoint(body)
    let origin: string
    try {
      origin = parseCheckpointText(parseNote(note).text).origin
    } catch (err) {
      throw new Refusal(400, `bad request: ${messageOf(err)}`)
    }
    const key = keys.get(origin)
    if (!key) throw new Refusal(404, `unknown log: ${origin}`)
    let checkpoint
    try {
      ({ checkpoint } = openCheckpoint(note, key))
    } catch (err) {
      throw new Refusal(403, messageOf(err))
    }
    if (oldSize > checkpoint.size) throw new Refusal(400, `bad request: old size ${oldSize} is larger than the checkpoint's ${checkpoint.size}`)
    const kept = state.logs[origin]!
    if (oldSize !== kept.size) throw new Refusal(409, `old size ${oldSize}, but the last cosigned checkpoint has size ${kept.size}`, `${kept.size}\n`)
    const keptRoot = kept.root_hash ? Buffer.from(kept.root_hash, 'base64') : undefined
    if (oldSize === checkpoint.size && keptRoot && !keptRoot.equals(checkpoint.rootHash)) {
      throw new Refusal(409, `a checkpoint of size ${checkpoint.size} with another root than the one cosigned (${kept.root_hash}): a split view`, `${kept.size}\n`)
    }
    if (oldSize === 0 && proof.length > 0) throw new Refusal(422, 'a proof from size 0 must be empty')
    if (keptRoot && oldSize > 0) {
      const failure = verifyConsistency(oldSize, checkpoint.size, proof, keptRoot, checkpoint.rootHash)
      if (failure) throw new Refusal(422, `the checkpoint of size ${checkpoint.size} does not extend the one cosigned at size ${oldSize}: ${failure}`)
    }
    const text = checkpointText(checkpoint)
    const line = cosignatureLine(text, opts.key, now())
    const next = { ...state, logs: { ...state.logs, [origin]: { vkey: kept.vkey, size: checkpoint.size, root_hash: checkpoint.rootHash.toString('base64'), checkpoint: `${note}${line}` } } }
    writeDurably(opts.stateFile, `${JSON.stringify(next, null, 2)}\n`)
    state.logs[origin] = next.logs[origin]!
    return line
  }

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (path !== '/add-checkpoint') { res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: POST /add-checkpoint\n'); return }
    if (req.method !== 'POST') { res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain; charset=utf-8' }).end('POST a checkpoint here\n'); return }
    void readBodyText(req, res, MAX_BODY).then((body) => {
      if (body === null) return
      // Synchronous from the checks to the durable write: requests are handled one at a time.
      try {
        const line = add(body)
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(line)
      } catch (err) {
        const refusal = err instanceof Refusal ? err : new Refusal(err instanceof NoteError ? 400 : 500, messageOf(err))
        log(`refused (${refusal.status}): ${refusal.message}`)
        if (refusal.status === 409 && refusal.body) res.writeHead(409, { 'content-type': 'text/x.tlog.size' }).end(refusal.body)
        else res.writeHead(refusal.status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${refusal.message}\n`)
      }
    })
  })
  const port = await listenOn(server, opts.port, opts.host ?? '127.0.0.1')
  const host = opts.host && opts.host !== '0.0.0.0' ? opts.host : '127.0.0.1'
  return {
    url: `http://${host}:${port}`,
    port,
    state: () => JSON.parse(JSON.stringify(state)) as WitnessState,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
