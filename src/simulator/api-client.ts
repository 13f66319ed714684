/** A small client of the platform's public API for the driver simulator (nothing of the server's code). */
export class ApiError extends Error {
  constructor(readonly status: number, readonly body: string, what: string) {
    super(`${what}: ${status} ${body.slice(0, 500)}`)
  }
}

export class ApiClient {
  /** Requests sent and their wall-clock durations (ms), by label (the benchmark reads them). */
  readonly timings = new Map<string, number[]>()

  /** Without a token (`--route ID:TOKEN` only), every call is made `as` a driver. */
  constructor(readonly base: string, readonly token?: string) {}

  as(token: string): ApiClient { return new ApiClient(this.base, token) }

  async call<T = any>(method: string, path: string, body?: unknown, expect: number[] = [200, 201, 202]): Promise<T> {
    const started = performance.now()
    const res = await fetch(`${this.base}/api/v1${path}`, {
      method,
      headers: { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    const text = await res.text()
    const label = `${method} ${path.replace(/\/[0-9A-Z]{26}(?=\/|$)|\/\d+(?=\/|$)/g, '/:id')}`
    const list = this.timings.get(label) ?? this.timings.set(label, []).get(label)!
    list.push(performance.now() - started)
    if (!expect.includes(res.status)) throw new ApiError(res.status, text, `${method} ${path}`)
    return (text ? JSON.parse(text) : undefined) as T
  }
}
