import { type Kysely, sql } from 'kysely'
import { type Checkpoint, logVerifierKey, openCheckpoint, signCheckpoint, cosignaturesBy } from '../checkpoint-note.js'
import { consistencyProof, rootAt } from '../proofs.js'
import type { NotaryKey, TreeHead } from '../tree-head.js'
import { addCheckpoint, type WitnessEndpoint } from './witness-client.js'
import { messageOf } from '../../shared/thrown.js'

/** A witness holds a checkpoint this tree does not extend: the notary will not sign it. */
export class WitnessRefusedError extends Error {}
/** A witness could not be asked (down, timeout, misconfigured): the head waits; no finding. */
export class WitnessUnavailableError extends Error {}

/** What /metrics and /ready may read: the last cosigned size, and why the notary stopped, if it did. */
export interface WitnessingState {
  cosignedSize: number | undefined
  /** The refusal: the tree does not extend what a witness (or this process) cosigned. */
  refused: string | undefined
  unavailable: string | undefined
  /** The last round trip to every witness, in ms. */
  roundTripMs: number | undefined
}

export interface WitnessingOptions {
  timeoutMs?: number
  /** Tries per witness after 409s naming another size. */
  maxTries?: number
}

const nameOf = (w: WitnessEndpoint) => `witness ${w.key.name} (${w.url})`

/**
 * The notary's side of tlog-witness: before a head is signed into the tables, its checkpoint is
 * cosigned by every configured witness, each with a consistency proof from the size that witness
 * last cosigned. What the notary remembers (in memory, and in `audit_checkpoints`) is only where it
 * starts from: a database writer who rolls the tables back is answered by the witness's 409 with
 * its real size, and the proof from that size is checked by the witness against the root it kept.
 */
export class Witnessing {
  private last: Checkpoint | undefined
  private readonly knownSize = new Map<string, number>()
  private readonly timeoutMs: number
  private readonly maxTries: number
  readonly state: WitnessingState = { cosignedSize: undefined, refused: undefined, unavailable: undefined, roundTripMs: undefined }

  constructor(readonly witnesses: WitnessEndpoint[], readonly origin: string, private readonly key: NotaryKey, opts: WitnessingOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 5000
    this.maxTries = opts.maxTries ?? 4
  }

  /** The last checkpoint every witness cosigned, as the tables hold it (a start, not a proof). */
  private async stored(db: Kysely<any>): Promise<Checkpoint | undefined> {
    const r = await sql<{ checkpoint: string }>`select checkpoint from audit_checkpoints order by tree_size desc limit 1`.execute(db)
    const note = r.rows[0]?.checkpoint
    if (!note) return undefined
    try {
      const opened = openCheckpoint(note, logVerifierKey(this.origin, this.key.publicKey))
      return this.witnesses.every((w) => cosignaturesBy(opened.note, w.key).length > 0) ? opened.checkpoint : undefined
    } catch {
      return undefined
    }
  }

  private refuse(why: string): never {
    this.state.refused = why
    throw new WitnessRefusedError(why)
  }

  /**
   * The checkpoint of `head` cosigned by every witness (the note with their lines), or throws:
   * WitnessRefusedError when the tree does not extend what was cosigned, WitnessUnavailableError
   * when a witness could not answer. The tree up to head.treeSize must be written already.
   */
  async cosign(db: Kysely<any>, head: TreeHead): Promise<string> {
    this.last ??= await this.stored(db)
    const last = this.last
    if (last) {
      if (head.treeSize < last.size) this.refuse(`the tree has ${head.treeSize} leaves, fewer than the ${last.size} of the checkpoint the witnesses cosigned: the log was rolled back`)
      const rootThen = last.size === head.treeSize ? head.rootHash : await rootAt(db, last.size).catch(() => undefined)
      if (!rootThen?.equals(last.rootHash)) {
        this.refuse(`the stored tree at size ${last.size} is not the checkpoint the witnesses cosigned (root ${last.rootHash.toString('base64')}): the log or its audit tables were rewritten`)
      }
    }
    const checkpoint = { origin: this.origin, size: head.treeSize, rootHash: head.rootHash }
    const note = signCheckpoint(checkpoint, this.key.privateKey)
    const started = performance.now()
    const answers = await Promise.allSettled(this.witnesses.map((w) => this.askOne(db, w, note, checkpoint)))
    const refused = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected' && a.reason instanceof WitnessRefusedError)
    if (refused) this.refuse((refused.reason as Error).message)
    const failed = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected')
    if (failed) {
      this.state.unavailable = messageOf(failed.reason)
      throw failed.reason instanceof WitnessUnavailableError ? failed.reason : new WitnessUnavailableError(messageOf(failed.reason))
    }
    this.state.roundTripMs = performance.now() - started
    this.state.unavailable = undefined
    this.state.refused = undefined
    this.state.cosignedSize = head.treeSize
    this.last = checkpoint
    return note + answers.map((a) => (a as PromiseFulfilledResult<string>).value).join('')
  }

  /** One witness: from the size it last cosigned (as this process believes, else as it answers with 409). */
  private async askOne(db: Kysely<any>, w: WitnessEndpoint, note: string, c: Checkpoint): Promise<string> {
    let old = this.knownSize.get(w.url) ?? this.last?.size ?? 0
    for (let tries = 0; tries < this.maxTries; tries++) {
      if (old > c.size) this.refuse(`${nameOf(w)} cosigned a tree of ${old} leaves; this one has ${c.size}: the log was rolled back`)
      let proof: Buffer[]
      try {
        proof = old === 0 ? [] : await consistencyProof(db, old, c.size)
      } catch (err) {
        this.refuse(`no consistency proof from size ${old} (${nameOf(w)}'s) to ${c.size}: ${messageOf(err)}`)
      }
      let answer
      try {
        answer = await addCheckpoint(w, old, proof, note, this.timeoutMs)
      } catch (err) {
        throw new WitnessUnavailableError(`${nameOf(w)} did not answer: ${messageOf(err)}`)
      }
      if (answer.status === 200 && 'cosignature' in answer) {
        this.knownSize.set(w.url, c.size)
        return answer.cosignature
      }
      if (answer.status === 409 && 'knownSize' in answer) {
        // Same size twice: it holds another root at that size.
        if (answer.knownSize === old) this.refuse(`${nameOf(w)} cosigned another root at size ${old}: this tree is a split view of the log it witnessed`)
        this.knownSize.set(w.url, answer.knownSize)
        old = answer.knownSize
        continue
      }
      const message = 'message' in answer ? answer.message : ''
      if (answer.status === 422) this.refuse(`${nameOf(w)} refuses (422): this tree of ${c.size} does not extend the checkpoint it cosigned at size ${old}: ${message}`)
      throw new WitnessUnavailableError(`${nameOf(w)} answered ${answer.status}: ${message}`)
    }
    throw new WitnessUnavailableError(`${nameOf(w)} kept answering 409 with other sizes`)
  }
}

/**
 * The cosigned head into the tables, fenced like a batch (this notary holds the lease and sealed at
 * least this far): the RFC 9162 head and its checkpoint note with the witnesses' cosignatures.
 */
export async function storeWitnessedHead(db: Kysely<any>, fence: { name: string; owner: string }, head: TreeHead & { signature: Buffer; keyId: string }, note: string): Promise<boolean> {
  const r = await sql<{ held: number }>`
    with fence as (
      select 1 from audit_notary
      where name = ${fence.name} and owner = ${fence.owner} and tree_size >= ${head.treeSize} and lease_until >= clock_timestamp()
    ), signed as (
      insert into audit_tree_heads (tree_size, root_hash, timestamp_ms, signature, key_id)
      select ${head.treeSize}, decode(${head.rootHash.toString('hex')}, 'hex'), ${head.timestamp}, decode(${head.signature.toString('hex')}, 'hex'), ${head.keyId}
      where exists (select from fence)
      on conflict (tree_size) do nothing
    ), cosigned as (
      insert into audit_checkpoints (tree_size, checkpoint)
      select ${head.treeSize}, ${note} where exists (select from fence)
      on conflict (tree_size) do update set checkpoint = excluded.checkpoint
    )
    select count(*)::int as held from fence`.execute(db)
  return Number(r.rows[0]?.held ?? 0) > 0
}
