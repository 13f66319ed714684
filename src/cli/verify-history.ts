/**
 * `npm run verify-history -- <history.json> --public-key <file>`: checks a history with proofs
 * offline, with nothing but the file and the notary's public key (SPKI PEM, the JSON of
 * `GET /audit/v1/public-key`, or the raw key in base64): the tree head's signature, and each event's
 * bytes against its leaf and its leaf against the signed root. Names every event that fails, and why.
 * With `--known-head <checkpoint file>` (a checkpoint kept earlier: from a webhook's
 * `Audit-Checkpoint`, or `GET /audit/v1/checkpoint`) the history's tree must also extend it: equal
 * roots at one size, else a consistency proof, fetched from `--log <url>` (it proves itself).
 * Exit 0: all verified; 1: something failed; 2: usage.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { publicKeyFrom } from '../audit/tree-head.js'
import { verifyHistory } from '../audit/verify-history.js'
import { knownHeadProblem, openKnownHead } from '../audit/known-head.js'
import { messageOf } from '../shared/thrown.js'

const usage = 'usage: verify-history <history.json> --public-key <file> [--known-head <checkpoint file> [--log <url>]]\n'

/** PROOF(from, D[to]) from the log's public endpoint; undefined when it cannot be had. */
async function fetchedProof(log: string | undefined, from: number, to: number): Promise<Buffer[] | undefined> {
  if (!log || from === 0) return from === 0 ? [] : undefined
  const res = await fetch(`${log.replace(/\/+$/, '')}/audit/v1/consistency?from=${from}&to=${to}`, { signal: AbortSignal.timeout(10_000) })
  if (res.status !== 200) return undefined
  const body = await res.json() as { consistency_path?: unknown }
  return Array.isArray(body.consistency_path) ? body.consistency_path.map((h) => Buffer.from(String(h), 'base64')) : undefined
}

async function main(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args, options: { 'public-key': { type: 'string' }, 'known-head': { type: 'string' }, log: { type: 'string' } }, allowPositionals: true })
  if (positionals.length !== 1 || !values['public-key']) {
    process.stderr.write(usage)
    return 2
  }
  let doc: unknown
  try {
    doc = JSON.parse(readFileSync(positionals[0]!, 'utf8'))
  } catch (err) {
    process.stderr.write(`cannot read ${positionals[0]}: ${messageOf(err)}\n`)
    return 1
  }
  const key = publicKeyFrom(readFileSync(values['public-key'], 'utf8'))
  const r = verifyHistory(doc, key)
  const knownFile = values['known-head']
  if (knownFile) {
    let problem: string | undefined
    try {
      const known = openKnownHead(readFileSync(knownFile, 'utf8'), key)
      const head = (doc as { tree_head?: { tree_size?: unknown; root_hash?: unknown } | null }).tree_head
      if (typeof head?.tree_size !== 'number' || typeof head.root_hash !== 'string') problem = 'the history has no signed tree head to hold against it'
      else {
        const proof = head.tree_size > known.size ? await fetchedProof(values.log, known.size, head.tree_size) : []
        problem = knownHeadProblem(known, head.tree_size, Buffer.from(head.root_hash, 'base64'), proof)
        if (problem && !proof && !values.log) problem += ' (give --log <url> to fetch the proof)'
      }
    } catch (err) {
      problem = `not a checkpoint signed by this public key: ${messageOf(err)}`
    }
    if (problem) r.findings.push({ problem: `known head ${knownFile}: ${problem}` })
    r.ok = r.findings.length === 0
  }
  for (const f of r.findings) process.stdout.write(`FAIL ${f.event ? `${f.event}: ` : ''}${f.problem}\n`)
  const subject = `${r.streamId ?? 'the history'}${r.treeSize !== undefined ? `, tree head of size ${r.treeSize}` : ''}`
  process.stdout.write(r.ok
    ? `OK: ${r.verified} events of ${subject}: every event is in the signed tree as shown, the history is complete as of that head (the stream map's proof holds), and the signatures hold\n`
    : `FAILED: ${r.findings.length} problem(s); ${r.verified} events of ${subject} verified\n`)
  return r.ok ? 0 : 1
}

try {
  process.exitCode = await main(process.argv.slice(2))
} catch (err) {
  process.stderr.write(`verify-history: ${messageOf(err)}\n`)
  process.exitCode = 1
}
