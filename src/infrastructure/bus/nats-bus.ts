import type { Database } from '../database/database.js'
import {
  AckPolicy, type ConsumerConfig, type ConsumerMessages, DeliverPolicy, DiscardPolicy, type JetStreamClient,
  type JetStreamManager, jetstream, jetstreamManager, JetStreamApiError, type JsMsg, RetentionPolicy, StorageType,
} from '@nats-io/jetstream'
import { connect, headers as natsHeaders, type NatsConnection, nanos } from '@nats-io/transport-node'
import type { Kysely } from 'kysely'
import {
  type Bus, BUS_HEADERS, BUS_SUBJECT_ROOTS, type BusLogger, type BusMessage, type ConsumerOptions, type ConsumerStats,
  type Handler, type OutgoingMessage, type PublishResult, type Subscription, silentLogger,
} from './bus.js'
import { countRedeliveries, recordDeadLetter } from './dead-letters.js'
import { type ResolvedConsumerOptions, resolveConsumerOptions, runHandler, type Settlement } from './settlement.js'
import { assertConsumerName, assertPattern, assertSubject, subjectMatches } from './subjects.js'
import { partitionOf, partitionToken, unpartitioned, wireFilter, wireSubject } from './nats-partitions.js'
import { settlesWithin } from '../../shared/wakeup.js'
import { type PublishHealth, PublishHealthRecorder } from './publish-health.js'

export interface NatsBusOptions {
  url: string
  /** Where dead letters and redelivery counters are recorded. */
  db: Kysely<Database>
  logger?: BusLogger
  /** JetStream stream holding every bus subject. Default `PLATFORM`. */
  streamName?: string
  /** Prepended to every subject on the wire (isolates tests sharing one server). Default none. */
  subjectPrefix?: string
  /** Window in which a repeated message id is dropped by the server. Default 2 min (NATS' own). */
  duplicateWindowMs?: number
  /** Messages older than this leave the stream. Default 7 days. */
  retentionMs?: number
  /** Upper bound of unacknowledged (including delayed) messages per unordered consumer. Default 10 000. */
  maxAckPending?: number
  /** How long a publish waits for the stream's acknowledgement before it counts as failed. Default 2 s. */
  publishTimeoutMs?: number
  /**
   * Copies of the stream (and of each durable consumer) the JetStream cluster keeps: 1 on a single
   * server, 3 on a 3-node cluster (survives one node's loss). Default 1.
   */
  replicas?: number
  /**
   * Partitions of the subject space by message key (the event's stream): an ordered consumer is one
   * durable consumer per partition, each one message at a time, so one stream's messages keep their
   * order while different streams' go side by side. Default 16; every process must use the same.
   */
  partitions?: number
}

/**
 * A publish (and a JetStream API request) not acknowledged within this time fails: a publish sent
 * to a node that just died or a stream whose leader is being elected is retried by the relay
 * rather than waited on.
 */
const DEFAULT_PUBLISH_TIMEOUT_MS = 2_000
/** A pull request's lifetime, and the client's retry delay when it cannot look its consumer up. */
const PULL_EXPIRES_MS = 3_000
/** The server's heartbeat on a waiting pull request; two missed make the client pull again. */
const PULL_HEARTBEAT_MS = 1_000
/** Heartbeats missed in a row after which the consumer is closed and opened again. */
const PULL_REOPEN_AFTER_MISSED = 3

/** `nats://a:4222, nats://b:4222` → each URL (the client takes a list, not a comma-separated text). */
export const natsServers = (url: string): string[] => url.split(',').map((u) => u.trim()).filter(Boolean)

/**
 * An error that says "not now" rather than "no": a request unanswered in time, or with no
 * responder (JetStream without a leader for the stream, consumer or cluster), or the JetStream
 * API's own 503 (10008, temporarily unavailable).
 */
export function transientNatsError(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  if (['TimeoutError', 'JetStreamNotEnabled', 'NoRespondersError'].includes(err.name)) return true
  if (err.name === 'RequestError' && 'isNoResponders' in err && typeof err.isNoResponders === 'function') return err.isNoResponders() === true
  return err instanceof JetStreamApiError && (err.code === 10008 || err.status === 503)
}

const CONSUMER_NOT_FOUND = 10014
const STREAM_NOT_FOUND = 10059
const apiCode = (err: unknown) => (err instanceof JetStreamApiError ? err.code : undefined)

/**
 * JetStream adapter. One stream captures `events.>` and `commands.>`; each consumer is a durable
 * pull consumer with explicit acks. The delivery limit is enforced here, not by the server's
 * `max_deliver` (left unlimited): on nats-server 2.9 a message that reaches `max_deliver` only
 * produces a core-NATS advisory, lost when nobody listens at that instant, whereas a delivery
 * seen past the limit by this adapter is written to bus_dead_letters before it is terminated.
 */
export class NatsBus implements Bus {
  readonly kind = 'nats' as const
  private readonly subscriptions = new Set<NatsSubscription>()
  private readonly published = new PublishHealthRecorder()
  private readonly logger: BusLogger
  private readonly stream: string
  private readonly prefix: string
  readonly partitions: number
  readonly replicas: number
  private closed = false

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    private readonly opts: NatsBusOptions,
  ) {
    this.logger = opts.logger ?? silentLogger
    this.stream = opts.streamName ?? 'PLATFORM'
    this.prefix = opts.subjectPrefix ?? ''
    this.partitions = Math.max(1, opts.partitions ?? 16)
    this.replicas = Math.max(1, opts.replicas ?? 1)
  }

  static async connect(opts: NatsBusOptions): Promise<NatsBus> {
    const nc = await connect({
      // Every node of a cluster (NATS_URL comma-separated): the client starts from any that
      // answers and moves to another when its node dies, retrying forever every 250 ms.
      servers: natsServers(opts.url),
      name: `shipping-platform-${process.pid}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      // Every JetStream publish is a request; with async traces each one builds two Error objects
      // (stack captured) in case it fails: a few per cent of a busy process. Errors keep their message.
      noAsyncTraces: true,
    })
    // Publishes and consumer look-ups fail after 2 s rather than the client's 5 s: during a leader
    // election they are retried, and a short failure retries sooner. Management requests (making a
    // replicated consumer takes the cluster a while) keep the 5 s and are retried too.
    const api = { timeout: opts.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS }
    const bus = new NatsBus(nc, jetstream(nc, api), await jetstreamManager(nc), opts)
    bus.watchConnection()
    await bus.retrying('stream', () => bus.ensureStream())
    return bus
  }

  get streamName(): string { return this.stream }

  /**
   * Runs `fn` until the cluster answers it: a request that timed out or found no responder (a node
   * that died, a stream or consumer electing its leader, a cluster still forming) is tried again
   * after 0.2 s doubling to 2 s, forever unless the bus is closed; any other error is thrown. A
   * process starting its consumers while a node is lost must wait for the cluster, not exit.
   */
  async retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn()
      } catch (err) {
        if (this.closed || !transientNatsError(err)) throw err
        if (attempt === 1 || attempt % 10 === 0) this.logger.warn({ err, what, attempt }, 'nats did not answer; retrying')
        await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** attempt)))
      }
    }
  }

  private watchConnection(): void {
    void (async () => {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect' || s.type === 'reconnect') this.logger.warn({ nats: s.type }, 'nats connection status')
      }
    })().catch(() => undefined)
  }

  async ensureStream(): Promise<void> {
    const config = {
      name: this.stream,
      subjects: BUS_SUBJECT_ROOTS.map((r) => `${this.prefix}${r}.>`),
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_age: nanos(this.opts.retentionMs ?? 7 * 24 * 3600_000),
      duplicate_window: nanos(this.opts.duplicateWindowMs ?? 120_000),
      num_replicas: this.replicas,
    }
    try {
      const info = await this.jsm.streams.info(this.stream)
      const c = info.config
      if (c.duplicate_window !== config.duplicate_window || c.max_age !== config.max_age || c.num_replicas !== config.num_replicas) {
        await this.jsm.streams.update(this.stream, { ...c, duplicate_window: config.duplicate_window, max_age: config.max_age, num_replicas: config.num_replicas })
          .then(() => {
            if (c.num_replicas !== config.num_replicas) this.logger.info({ stream: this.stream, from: c.num_replicas, to: config.num_replicas }, 'nats stream replicas changed')
          }, (err) => {
            // The stream keeps working with its old copies; the operator scales it (or fixes the setting).
            this.logger.error({ err, stream: this.stream, replicas: c.num_replicas, wanted: config.num_replicas },
              `nats stream not updated: it keeps ${c.num_replicas} replica(s); check NATS_STREAM_REPLICAS against the cluster's size, or scale it with \`nats stream edit ${this.stream} --replicas ${config.num_replicas}\``)
          })
      }
    } catch (err) {
      if (apiCode(err) !== STREAM_NOT_FOUND) throw err
      try {
        await this.jsm.streams.add(config)
      } catch (addErr) {
        // Another process created it in between.
        await this.jsm.streams.info(this.stream).catch(() => { throw addErr })
      }
    }
  }

  publishHealth(): PublishHealth { return this.published.state }

  async publish(input: OutgoingMessage | OutgoingMessage[]): Promise<PublishResult> {
    return this.published.track(this.publishNow(input))
  }

  private async publishNow(input: OutgoingMessage | OutgoingMessage[]): Promise<PublishResult> {
    if (this.closed) throw new Error('bus closed')
    const messages = Array.isArray(input) ? input : [input]
    for (const m of messages) assertSubject(m.subject)
    const results = await Promise.allSettled(messages.map((m) => {
      const h = natsHeaders()
      for (const [k, v] of Object.entries(m.headers ?? {})) h.set(k, v)
      if (m.key !== undefined) h.set(BUS_HEADERS.key, m.key)
      if (m.onlyFor !== undefined) h.set(BUS_HEADERS.onlyFor, m.onlyFor)
      const wire = wireSubject(this.prefix, m.subject, partitionOf(m.key ?? m.id, this.partitions))
      return this.js.publish(wire, JSON.stringify(m.data ?? null), {
        msgID: m.id, headers: h, timeout: this.opts.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS,
      })
    }))
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) throw failed.reason
    const duplicates = results.filter((r) => r.status === 'fulfilled' && r.value.duplicate).length
    return { published: messages.length - duplicates, duplicates }
  }

  async subscribe<T = unknown>(options: ConsumerOptions, handler: Handler<T>): Promise<Subscription> {
    if (this.closed) throw new Error('bus closed')
    assertConsumerName(options.name)
    options.subjects.forEach(assertPattern)
    const o = resolveConsumerOptions(options, options.ordered ? 1 : undefined)
    // Ordered: one durable consumer per partition, one message in flight each (ordered by key,
    // parallel across keys). Unordered: one durable consumer over every partition.
    const durables = o.ordered
      ? Array.from({ length: this.partitions }, (_, k) => ({ durable: `${o.name}_${partitionToken(k)}`, filter: wireFilter(this.prefix, o.subjects, k) }))
      : [{ durable: o.name, filter: wireFilter(this.prefix, o.subjects) }]
    // One made before partitions: its messages had other subjects.
    if (o.ordered) await this.retrying(o.name, () => this.removeDurable(o.name))
    const subs: NatsSubscription[] = []
    for (const d of durables) {
      await this.retrying(d.durable, () => this.ensureConsumer(o, d.durable, d.filter))
      const sub: NatsSubscription = new NatsSubscription(this, o, d.durable, d.filter, handler as Handler, this.opts.db, this.logger, () => this.subscriptions.delete(sub))
      this.subscriptions.add(sub)
      subs.push(sub)
    }
    await Promise.all(subs.map((sub) => sub.start()))
    return {
      name: o.name,
      stop: async (opts) => { await Promise.all(subs.map((sub) => sub.stop(opts))) },
    }
  }

  /**
   * Creates the durable consumer, or brings the settings that may change up to date. One whose
   * filter cannot be changed in place (nats-server 2.9) is made again: it starts over at the oldest
   * retained message, which idempotent consumers absorb, rather than miss what its new filter covers.
   */
  async ensureConsumer(o: ResolvedConsumerOptions, durable: string, filter: string | undefined): Promise<void> {
    const wanted: Partial<ConsumerConfig> = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: o.startAt === 'new' ? DeliverPolicy.New : DeliverPolicy.All,
      ack_wait: nanos(o.ackWaitMs),
      max_deliver: -1,
      // One unacknowledged message at a time keeps publish order, retries included (per partition).
      max_ack_pending: o.ordered ? 1 : this.opts.maxAckPending ?? 10_000,
      ...(filter !== undefined ? { filter_subject: filter } : {}),
    }
    try {
      const info = await this.jsm.consumers.info(this.stream, durable)
      const c = info.config
      if ((c.filter_subject ?? undefined) !== wanted.filter_subject) {
        const updated = await this.jsm.consumers.update(this.stream, durable, { filter_subject: wanted.filter_subject ?? '' }).then(() => true, () => false)
        if (!updated) {
          this.logger.warn({ consumer: durable, from: c.filter_subject, to: wanted.filter_subject }, 'nats consumer filter changed: consumer made again')
          await this.removeDurable(durable)
          await this.jsm.consumers.add(this.stream, wanted)
          return
        }
      }
      if (c.ack_wait !== wanted.ack_wait || c.max_ack_pending !== wanted.max_ack_pending) {
        await this.jsm.consumers.update(this.stream, durable, { ack_wait: wanted.ack_wait!, max_ack_pending: wanted.max_ack_pending! })
          .catch((err) => this.logger.warn({ err, consumer: durable }, 'nats consumer settings not updated'))
      }
    } catch (err) {
      if (apiCode(err) !== CONSUMER_NOT_FOUND) throw err
      await this.jsm.consumers.add(this.stream, wanted).catch(async (addErr) => {
        // Another process created it in between.
        await this.jsm.consumers.info(this.stream, durable).catch(() => { throw addErr })
      })
    }
  }

  private async removeDurable(durable: string): Promise<void> {
    await this.jsm.consumers.delete(this.stream, durable).catch((err) => {
      if (apiCode(err) !== CONSUMER_NOT_FOUND) throw err
    })
  }

  wireToSubject(wire: string): string {
    return unpartitioned(this.prefix && wire.startsWith(this.prefix) ? wire.slice(this.prefix.length) : wire)
  }

  /** One entry per consumer: an ordered consumer's partitions are summed under its name. */
  async consumerStats(): Promise<ConsumerStats[]> {
    const byName = new Map<string, ConsumerStats>()
    for await (const c of this.jsm.consumers.list(this.stream)) {
      const name = c.name.replace(/_p\d+$/, '')
      const s = byName.get(name) ?? { name, pending: 0, inFlight: 0 }
      s.pending += c.num_pending + c.num_ack_pending
      s.inFlight += c.num_ack_pending
      byName.set(name, s)
    }
    return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))
  }

  async removeConsumer(name: string): Promise<void> {
    for (const s of this.subscriptions) if (s.name === name) await s.stop({ graceMs: 0 })
    await this.removeDurable(name)
    for (let k = 0; k < this.partitions; k++) await this.removeDurable(`${name}_${partitionToken(k)}`)
  }

  async ping(): Promise<void> {
    await this.jsm.streams.info(this.stream)
  }

  /** Deletes the stream (tests and tooling). */
  async destroyStream(): Promise<void> {
    await this.jsm.streams.delete(this.stream).catch(() => undefined)
  }

  async close(opts: { graceMs?: number } = {}): Promise<void> {
    if (this.closed) return
    this.closed = true
    const subs = [...this.subscriptions]
    await Promise.all(subs.map((s) => s.stop(opts)))
    // Drain flushes the acks of finished handlers; after an abandoned stop, close as a crash would.
    if (subs.every((s) => s.finishedCleanly)) await this.nc.drain().catch(() => this.nc.close())
    else await this.nc.close()
  }
}

class NatsSubscription implements Subscription {
  private messages: ConsumerMessages | undefined
  private stopped = false
  private abandoned = false
  private loopDone: Promise<void> = Promise.resolve()

  constructor(
    private readonly bus: NatsBus,
    private readonly o: ResolvedConsumerOptions,
    /** The durable consumer on the server: the consumer's name, or one partition of it. */
    private readonly durable: string,
    private readonly filter: string | undefined,
    private readonly handler: Handler,
    private readonly db: Kysely<Database>,
    private readonly logger: BusLogger,
    private readonly onStop: () => void,
  ) {}

  get name(): string { return this.o.name }

  async start(): Promise<void> {
    const first = await this.bus.retrying(this.durable, () => this.open())
    this.loopDone = this.run(first)
  }

  private async open(): Promise<ConsumerMessages> {
    const consumer = await this.bus.js.consumers.get(this.bus.streamName, this.durable)
    // A small prefetch: a buffered message's ack wait runs while it waits for a handler. Short pull
    // requests with frequent heartbeats: a pull waits on the consumer's leader, and when that node
    // dies nothing tells the client; it notices by the missing heartbeats (2 in a row) and asks
    // again, and retries a failed look-up after `expires`. The client's defaults (30 s, 15 s)
    // stalled a consumer 30–45 s after a node's loss; these keep it within a few seconds of the
    // new leader's election, for a pull request every few seconds per idle consumer.
    this.messages = await consumer.consume({ max_messages: this.o.concurrency, expires: PULL_EXPIRES_MS, idle_heartbeat: PULL_HEARTBEAT_MS })
    void this.watch(this.messages)
    return this.messages
  }

  /** Consumes until stopped; if the client library gives up on the consumer, opens it again. */
  private async run(first: ConsumerMessages): Promise<void> {
    let messages: ConsumerMessages | undefined = first
    let failures = 0
    while (!this.stopped) {
      try {
        messages ??= await this.open()
        failures = 0
        await this.loop(messages)
      } catch (err) {
        this.logger.error({ err, consumer: this.o.name }, 'nats consumer could not be opened; retrying')
      }
      messages = undefined
      // Soon after a reopen for silence; once a second while it cannot be opened.
      if (!this.stopped) await new Promise((r) => setTimeout(r, failures++ === 0 ? 100 : 1000))
    }
  }

  /**
   * Recreates the stream or consumer if the server lost them (a server restarted without its
   * store); reopens the consumer when its heartbeats stay missing after the client's own reset
   * (a pull request left on a dead leader that the reset did not replace).
   */
  private async watch(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const s of messages.status()) {
        if (this.stopped) return
        if (s.type === 'heartbeats_missed' && s.count >= PULL_REOPEN_AFTER_MISSED && this.messages === messages) {
          this.logger.warn({ consumer: this.o.name, durable: this.durable, missed: s.count }, 'nats consumer silent; reopening it')
          // Ends `loop` once the buffered messages are taken; `run` then opens it again.
          await messages.close().catch(() => undefined)
          return
        }
        if (s.type === 'consumer_not_found' || s.type === 'stream_not_found' || s.type === 'consumer_deleted') {
          this.logger.warn({ consumer: this.o.name, status: s.type }, 'nats consumer missing; recreating')
          await this.bus.ensureStream().then(() => this.bus.ensureConsumer(this.o, this.durable, this.filter))
            .catch((err) => this.logger.warn({ err, consumer: this.o.name }, 'nats consumer not recreated yet'))
        }
      }
    } catch { /* iterator closed */ }
  }

  private async loop(messages: ConsumerMessages): Promise<void> {
    const running = new Set<Promise<void>>()
    try {
      for await (const m of messages) {
        if (this.stopped) {
          // Prefetched but not started: hand it back for another process now.
          m.nak()
          continue
        }
        const p: Promise<void> = this.process(m).finally(() => { running.delete(p) })
        running.add(p)
        if (running.size >= this.o.concurrency) await Promise.race(running)
      }
    } catch (err) {
      if (!this.stopped) this.logger.error({ err, consumer: this.o.name }, 'nats consume ended')
    }
    await Promise.all(running)
  }

  private decode(m: JsMsg): BusMessage | undefined {
    const headers: Record<string, string> = {}
    for (const k of m.headers?.keys() ?? []) headers[k] = m.headers!.get(k)
    try {
      const data = m.data.length ? m.json<unknown>() : null
      return {
        id: headers[BUS_HEADERS.replayOf] ?? headers['Nats-Msg-Id'] ?? `${this.bus.streamName}:${m.seq}`,
        subject: this.bus.wireToSubject(m.subject),
        data,
        key: headers[BUS_HEADERS.key],
        headers,
        publishedAt: new Date(m.info.timestampNanos / 1e6),
      }
    } catch {
      return undefined
    }
  }

  private async process(m: JsMsg): Promise<void> {
    const message = this.decode(m)
    const attempt = m.info.deliveryCount
    if (message) {
      const onlyFor = message.headers[BUS_HEADERS.onlyFor]
      // Not for this consumer: a replay meant for another, or (no server-side filter) another subject.
      if ((onlyFor !== undefined && onlyFor !== this.o.name) || !this.o.subjects.some((p) => subjectMatches(p, message.subject))) {
        m.ack()
        return
      }
    }
    if (attempt > 1) {
      countRedeliveries(this.db, this.o.name, 1).catch((err) => this.logger.warn({ err }, 'redelivery count not recorded'))
    }
    let s: Settlement
    if (!message) {
      s = { kind: 'dead', reason: 'undecodable', error: 'payload is not JSON' }
    } else {
      // Keeps the server from redelivering while a slow handler still works on it.
      const heartbeat = setInterval(() => {
        if (this.abandoned) clearInterval(heartbeat)
        else m.working()
      }, Math.max(50, this.o.ackWaitMs / 3))
      heartbeat.unref()
      try {
        s = await runHandler(message, attempt, this.o, this.handler, this.logger)
      } finally {
        clearInterval(heartbeat)
      }
    }
    if (this.abandoned) return
    if (s.kind === 'ack') m.ack()
    else if (s.kind === 'nak') m.nak(s.delayMs)
    else await this.deadLetter(m, message, attempt, s)
  }

  private async deadLetter(m: JsMsg, message: BusMessage | undefined, attempt: number, s: Extract<Settlement, { kind: 'dead' }>): Promise<void> {
    const msg: BusMessage = message ?? {
      id: m.headers?.get('Nats-Msg-Id') || `${this.bus.streamName}:${m.seq}`,
      subject: this.bus.wireToSubject(m.subject),
      data: { raw: Buffer.from(m.data).toString('base64') },
      key: undefined,
      headers: {},
      publishedAt: new Date(m.info.timestampNanos / 1e6),
    }
    try {
      await recordDeadLetter(this.db, {
        consumer: this.o.name, message: msg, transportRef: `${this.bus.streamName}:${m.seq}`,
        deliveries: Math.min(attempt, this.o.maxDeliveries), reason: s.reason, error: s.error,
      })
      m.term()
      this.logger.warn({ consumer: this.o.name, message_id: msg.id, subject: msg.subject, reason: s.reason }, 'bus message dead-lettered')
    } catch (err) {
      // Never dropped: without its dead-letter row the message stays in NATS and comes back.
      this.logger.error({ err, consumer: this.o.name, message_id: msg.id }, 'dead letter not recorded; redelivering')
      m.nak(1000)
    }
  }

  /** False when a stop gave up on running handlers (their messages come back after the ack wait). */
  get finishedCleanly(): boolean { return !this.abandoned }

  async stop(opts: { graceMs?: number } = {}): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    this.onStop()
    const graceMs = opts.graceMs ?? 5000
    // close() resolves once the loop has taken everything buffered, which a busy loop may not do
    // within the grace period: not awaited on its own.
    const closed = this.messages?.close().catch(() => undefined)
    const finished = await settlesWithin(Promise.all([closed, this.loopDone]), graceMs)
    if (!finished) this.abandoned = true
  }
}
