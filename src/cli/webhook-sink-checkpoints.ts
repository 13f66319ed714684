import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Checkpoint, openCheckpoint } from '../audit/checkpoint-note.js'
import { knownHeadProblem } from '../audit/known-head.js'
import type { VerifierKey } from '../audit/signed-note.js'
import { messageOf } from '../shared/thrown.js'

/** What became of a webhook's `Audit-Checkpoint`. */
export interface KeptCheckpoint {
  size?: number
  /** kept: a larger tree, stored; same/older: nothing new; rewrite: it contradicts what was kept; invalid: not signed by the log. */
  outcome: 'kept' | 'same' | 'older' | 'rewrite' | 'invalid'
  detail?: string
}

const fileOf = (size: number) => `checkpoint-${String(size).padStart(12, '0')}.txt`

/**
 * A carrier's webhook sink as a witness: keeps every larger checkpoint the webhooks bring (a
 * directory `audit-log check --known-heads` and `verify-history --known-head` read), and holds each
 * new one against the last kept: a different root at one size, or, with the log's address, a tree
 * that its consistency proof does not show to extend the kept one, is a rewritten log.
 */
export class CheckpointKeeper {
  private last: Checkpoint | undefined
  /** Deliveries arrive concurrently; each is held against the one kept before it. */
  private queue: Promise<unknown> = Promise.resolve()

  constructor(private readonly dir: string, private readonly logKey: VerifierKey, private readonly logUrl?: string) {
    mkdirSync(dir, { recursive: true })
    const kept = readdirSync(dir).filter((f) => /^checkpoint-\d+\.txt$/.test(f)).sort()
    const newest = kept[kept.length - 1]
    if (newest) this.last = openCheckpoint(readFileSync(join(dir, newest), 'utf8'), logKey).checkpoint
  }

  get latest(): Checkpoint | undefined { return this.last }

  private async proof(from: number, to: number): Promise<Buffer[] | undefined> {
    if (!this.logUrl) return undefined
    try {
      const res = await fetch(`${this.logUrl.replace(/\/+$/, '')}/audit/v1/consistency?from=${from}&to=${to}`, { signal: AbortSignal.timeout(5000) })
      if (res.status !== 200) return undefined
      const body = await res.json() as { consistency_path?: unknown }
      return Array.isArray(body.consistency_path) ? body.consistency_path.map((h) => Buffer.from(String(h), 'base64')) : undefined
    } catch {
      return undefined
    }
  }

  receive(header: string): Promise<KeptCheckpoint> {
    const next = this.queue.then(() => this.judge(header))
    this.queue = next.catch(() => undefined)
    return next
  }

  private async judge(header: string): Promise<KeptCheckpoint> {
    const note = Buffer.from(header, 'base64').toString('utf8')
    let c: Checkpoint
    try {
      c = openCheckpoint(note, this.logKey).checkpoint
    } catch (err) {
      return { outcome: 'invalid', detail: messageOf(err) }
    }
    const last = this.last
    if (!last || c.size > last.size) {
      const proof = last ? await this.proof(last.size, c.size) : []
      // Without the log's address a larger tree is kept unproven; the kept files are checked later.
      const problem = last && proof ? knownHeadProblem(last, c.size, c.rootHash, proof) : undefined
      if (problem) return this.rewrite(note, c, problem)
      writeFileSync(join(this.dir, fileOf(c.size)), note)
      this.last = c
      return { size: c.size, outcome: 'kept' }
    }
    if (c.size === last.size) {
      const problem = knownHeadProblem(last, c.size, c.rootHash, [])
      return problem ? this.rewrite(note, c, problem) : { size: c.size, outcome: 'same' }
    }
    // An older checkpoint (another process's, a second old): it must be a prefix of the kept one.
    const proof = await this.proof(c.size, last.size)
    const problem = proof ? knownHeadProblem(c, last.size, last.rootHash, proof) : undefined
    return problem ? this.rewrite(note, c, problem) : { size: c.size, outcome: 'older' }
  }

  private rewrite(note: string, c: Checkpoint, problem: string): KeptCheckpoint {
    // Evidence, kept apart: the directory itself holds only what extends the log as first seen.
    mkdirSync(join(this.dir, 'conflicts'), { recursive: true })
    writeFileSync(join(this.dir, 'conflicts', `checkpoint-${c.size}-${Date.now()}.txt`), note)
    return { size: c.size, outcome: 'rewrite', detail: problem }
  }
}
