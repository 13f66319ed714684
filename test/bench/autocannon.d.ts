// autocannon ships no type declarations and @types/autocannon is not installed: the little the benchmarks use.
declare module 'autocannon' {
  namespace autocannon {
    type Options = { url: string; connections?: number; duration?: number; headers?: Record<string, string>; [option: string]: unknown }
    interface Histogram { average: number; p50: number; p90: number; p99: number; max: number; [stat: string]: number }
    interface Result { requests: Histogram; latency: Histogram; throughput: Histogram; non2xx: number; errors: number; timeouts: number; [field: string]: unknown }
  }
  function autocannon(opts: autocannon.Options): Promise<autocannon.Result>
  export default autocannon
}
