/**
 * `npm run verify-history -- <history.json> --public-key <file>`: checks a history with proofs
 * offline, with nothing but the file and the notary's public key (SPKI PEM, the JSON of
 * `GET /audit/v1/public-key`, or the raw key in base64): the tree head's signature, and each event's
 * bytes against its leaf and its leaf against the signed root. Names every event that fails, and why.
 * Exit 0: all verified; 1: something failed; 2: usage.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { publicKeyFrom } from '../audit/tree-head.js'
import { verifyHistory } from '../audit/verify-history.js'
import { messageOf } from '../shared/thrown.js'

const usage = 'usage: verify-history <history.json> --public-key <file>\n'

function main(args: string[]): number {
  const { positionals, values } = parseArgs({ args, options: { 'public-key': { type: 'string' } }, allowPositionals: true })
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
  for (const f of r.findings) process.stdout.write(`FAIL ${f.event ? `${f.event}: ` : ''}${f.problem}\n`)
  const subject = `${r.streamId ?? 'the history'}${r.treeSize !== undefined ? `, tree head of size ${r.treeSize}` : ''}`
  process.stdout.write(r.ok
    ? `OK: ${r.verified} events of ${subject}: every event is in the signed tree as shown, the history is complete as of that head (the stream map's proof holds), and the signatures hold\n`
    : `FAILED: ${r.findings.length} problem(s); ${r.verified} events of ${subject} verified\n`)
  return r.ok ? 0 : 1
}

try {
  process.exitCode = main(process.argv.slice(2))
} catch (err) {
  process.stderr.write(`verify-history: ${messageOf(err)}\n`)
  process.exitCode = 1
}
