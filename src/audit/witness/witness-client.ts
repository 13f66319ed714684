import { ALG_COSIGNATURE_V1, parseNote, parseVerifierKey, type VerifierKey } from '../signed-note.js'
import { cosignaturesBy } from '../checkpoint-note.js'
import { messageOf } from '../../shared/thrown.js'

/** A witness the notary asks: where its add-checkpoint is, and its cosigner key (type 0x04). */
export interface WitnessEndpoint {
  /** The submission prefix: `<url>/add-checkpoint` is posted to. */
  url: string
  key: VerifierKey
}

/**
 * `AUDIT_WITNESSES`: comma-separated `<vkey>@<url>`, e.g.
 * `carrier.example/witness+1f2e3d4c+BK…@https://witness.carrier.example`. A vkey holds no `@` or
 * `,` (a name has no spaces or `+`, base64 no `@`), so the first `@` splits each entry.
 */
export function parseWitnesses(text: string | undefined): WitnessEndpoint[] {
  if (!text || !text.trim()) return []
  return text.split(',').map((raw) => raw.trim()).filter(Boolean).map((entry) => {
    const at = entry.indexOf('@')
    if (at < 0) throw new Error(`AUDIT_WITNESSES: "${entry}" is not <witness vkey>@<url>`)
    let key: VerifierKey
    try {
      key = parseVerifierKey(entry.slice(0, at), [ALG_COSIGNATURE_V1])
    } catch (err) {
      throw new Error(`AUDIT_WITNESSES: the key of "${entry}": ${messageOf(err)}`)
    }
    const url = entry.slice(at + 1).replace(/\/+$/, '')
    if (!/^https?:\/\/[^\s]+$/.test(url)) throw new Error(`AUDIT_WITNESSES: "${entry.slice(at + 1)}" is not an http(s) URL`)
    return { url, key }
  })
}

export type AddCheckpointAnswer =
  | { status: 200; cosignature: string }
  | { status: 409; knownSize: number }
  | { status: number; message: string }

/** One add-checkpoint call; network failures throw. */
export async function addCheckpoint(w: WitnessEndpoint, oldSize: number, proof: Buffer[], note: string, timeoutMs: number): Promise<AddCheckpointAnswer> {
  const body = `old ${oldSize}\n${proof.map((h) => `${h.toString('base64')}\n`).join('')}\n${note}`
  const res = await fetch(`${w.url}/add-checkpoint`, { method: 'POST', body, headers: { 'content-type': 'text/plain; charset=utf-8' }, signal: AbortSignal.timeout(timeoutMs) })
  const text = await res.text()
  if (res.status === 409) {
    const m = /^(\d+)\n?$/.exec(text)
    return m ? { status: 409, knownSize: Number(m[1]) } : { status: 409, message: text.trim() }
  }
  if (res.status !== 200) return { status: res.status, message: text.trim().slice(0, 300) }
  // Only the lines of this witness's key that verify over the checkpoint count.
  const lines = cosignaturesBy(parseNote(`${note}${text.endsWith('\n') ? text : `${text}\n`}`), w.key)
  if (lines.length === 0) return { status: 502, message: 'the witness answered 200 without a valid cosignature of its key' }
  return { status: 200, cosignature: lines[lines.length - 1]!.line }
}
