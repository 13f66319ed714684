/**
 * The per-process cache every request-path cache is made of (tokens, shipment views, parties): never
 * the only copy of anything, so a miss just reads the read model. What keeps it honest:
 * - entries expire after `ttlMs` (a change notice may be lost while LISTEN reconnects); 0 disables;
 * - at most `maxEntries`: the oldest fill goes first. A hit does not reorder (that cost a measurable
 *   share of a hit, and the TTL refills hot entries anyway);
 * - entries carry tags (their organization, their shipment): `invalidate` drops every entry of a tag;
 * - a generation guard: a load that began before an invalidation is not stored, so a slow read cannot
 *   put back what an invalidation has just removed (`begin` before the read, pass it to `set`);
 * - held tags: while a change is on its way (announced in-process, not yet committed everywhere) the
 *   entries of its tags are neither served nor filled (`hold` / `release`, counted).
 */
export interface CacheOptions<K, V> {
  ttlMs: number
  maxEntries: number
  /** The names under which an entry is invalidated (computed once, when it is stored). */
  tagsOf?: (key: K, value: V) => readonly string[]
  now?: () => number
}

interface Entry<V> { value: V; storedAt: number; tags: readonly string[] }
interface Loading<V> { generation: number; promise: Promise<V | undefined> }

const NO_TAGS: readonly string[] = []

export class Cache<K, V> {
  private readonly entries = new Map<K, Entry<V>>()
  private readonly tagged = new Map<string, Set<K>>()
  private readonly held = new Map<string, number>()
  private readonly loading = new Map<K, Loading<V>>()
  private generation = 0
  private readonly now: () => number

  constructor(private readonly opts: CacheOptions<K, V>) {
    this.now = opts.now ?? Date.now
  }

  get size(): number { return this.entries.size }

  /** Marks the start of a read that may fill; pass the result to `set`. */
  begin(): number { return this.generation }

  get(key: K): V | undefined {
    const e = this.entries.get(key)
    if (!e) return undefined
    if (this.held.size > 0 && this.isHeld(e.tags)) return undefined
    if (this.now() - e.storedAt >= this.opts.ttlMs) {
      this.delete(key)
      return undefined
    }
    return e.value
  }

  /** Stores unless an invalidation came after `generation` or one of its tags is held; true when stored. */
  set(key: K, value: V, generation: number): boolean {
    if (this.opts.ttlMs <= 0 || this.opts.maxEntries <= 0 || generation !== this.generation) return false
    const tags = this.opts.tagsOf?.(key, value) ?? NO_TAGS
    if (this.held.size > 0 && this.isHeld(tags)) return false
    this.delete(key)
    if (this.entries.size >= this.opts.maxEntries) {
      // Maps iterate in insertion order: the oldest fill.
      const oldest = this.entries.keys().next()
      if (!oldest.done) this.delete(oldest.value)
    }
    this.entries.set(key, { value, storedAt: this.now(), tags })
    for (const tag of tags) {
      let keys = this.tagged.get(tag)
      if (!keys) this.tagged.set(tag, (keys = new Set()))
      keys.add(key)
    }
    return true
  }

  /**
   * The cached value, or `load`'s (stored unless undefined). Concurrent misses of one key share one
   * load, unless an invalidation came between them: a caller after it never gets a value read before it.
   */
  getOrLoad(key: K, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const hit = this.get(key)
    if (hit !== undefined) return Promise.resolve(hit)
    const pending = this.loading.get(key)
    if (pending && pending.generation === this.generation) return pending.promise
    const loading = { generation: this.generation } as Loading<V>
    this.loading.set(key, loading)
    loading.promise = (async () => {
      try {
        const value = await load()
        if (value !== undefined) this.set(key, value, loading.generation)
        return value
      } finally {
        if (this.loading.get(key) === loading) this.loading.delete(key)
      }
    })()
    return loading.promise
  }

  /** Drops every entry of these tags; loads that began before are not stored. */
  invalidate(tags: Iterable<string>): void {
    this.generation++
    for (const tag of tags) {
      const keys = this.tagged.get(tag)
      if (!keys) continue
      for (const key of [...keys]) this.delete(key)
    }
  }

  clear(): void {
    this.generation++
    this.entries.clear()
    this.tagged.clear()
  }

  /** Until released as often: these tags' entries are neither served nor filled. */
  hold(tags: Iterable<string>): void {
    for (const tag of tags) this.held.set(tag, (this.held.get(tag) ?? 0) + 1)
  }

  /** Loads that ran while the tags were held may have read a change half-way: they are not stored. */
  release(tags: Iterable<string>): void {
    this.generation++
    for (const tag of tags) {
      const n = (this.held.get(tag) ?? 1) - 1
      if (n <= 0) this.held.delete(tag)
      else this.held.set(tag, n)
    }
  }

  private isHeld(tags: readonly string[]): boolean {
    for (const tag of tags) if (this.held.has(tag)) return true
    return false
  }

  private delete(key: K): void {
    const e = this.entries.get(key)
    if (!e) return
    this.entries.delete(key)
    for (const tag of e.tags) {
      const keys = this.tagged.get(tag)
      keys?.delete(key)
      if (keys?.size === 0) this.tagged.delete(tag)
    }
  }
}
