import type { Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface Tracing {
  tracer: Tracer;
  propagator: W3CTraceContextPropagator;
  /** Sends what is still batched, then stops. */
  close(): Promise<void>;
}

/**
 * Traces over OTLP/HTTP when an endpoint is configured (the standard
 * OTEL_EXPORTER_OTLP_* variables); undefined otherwise, and then no span
 * object is ever made. The provider is not registered globally: spans are
 * parented explicitly, so no context manager runs on the hot path.
 */
export function createTracing(endpoint: string | undefined, serviceName: string): Tracing | undefined {
  if (!endpoint) return undefined;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint }))],
  });
  return {
    tracer: provider.getTracer('tollgate'),
    propagator: new W3CTraceContextPropagator(),
    // A collector that is down must not fail shutdown: those spans are lost, nothing else.
    close: () => provider.shutdown().catch(() => undefined),
  };
}
