import { inSpan, SpanKind } from '../tracing/tracing.js'
import type { Bus, ConsumerOptions, Handler } from './bus.js'

/**
 * The bus with each delivery that carries a `traceparent` header handled inside a consumer span of
 * that trace (active in the OpenTelemetry context while the handler runs). Applied by createBus
 * only when tracing is on.
 */
export function traced(bus: Bus): Bus {
  return Object.assign(Object.create(null) as Bus, {
    kind: bus.kind,
    publish: bus.publish.bind(bus),
    subscribe<T>(options: ConsumerOptions, handler: Handler<T>) {
      return bus.subscribe<T>(options, (d) => {
        const parent = d.headers['traceparent']
        if (!parent) return handler(d)
        return inSpan(`consume ${options.name} ${d.subject}`, parent, { kind: SpanKind.CONSUMER, attributes: { 'messaging.consumer.name': options.name, 'messaging.message.id': d.id, 'messaging.delivery.attempt': d.attempt } }, async () => { await handler(d) })
      })
    },
    consumerStats: bus.consumerStats.bind(bus),
    removeConsumer: bus.removeConsumer.bind(bus),
    ping: bus.ping.bind(bus),
    publishHealth: bus.publishHealth.bind(bus),
    close: bus.close.bind(bus),
  } satisfies Bus)
}
