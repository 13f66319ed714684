import { setTracingEnabled } from './tracing.js'

/**
 * Starts the OpenTelemetry Node SDK when `OTEL_EXPORTER_OTLP_ENDPOINT` is set: spans batched and
 * exported over OTLP/HTTP (the exporter reads the standard OTEL_* variables), W3C trace context,
 * the async-local context manager. Without the variable nothing is loaded at all.
 * Returns how to flush and stop it.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<() => Promise<void>> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT) return async () => {}
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ])
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'shipping-platform' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  })
  provider.register()
  setTracingEnabled(true)
  return async () => {
    setTracingEnabled(false)
    await provider.shutdown()
  }
}
