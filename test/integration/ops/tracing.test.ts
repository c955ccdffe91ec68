import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { recordedInputTokens } from '../../support/fake-upstream/index.js';
import { seedKey, startDataPlane, type DataPlane } from '../../support/data-plane.js';
import { edgeRequest, FORMATS, modelBody, servedAs } from '../../support/edge-calls.js';
import { WIRE } from '../../../proxy/wire/registry.js';
import type { WireFormat } from '../../../proxy/call.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: {
    key: string;
    value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; arrayValue?: { values: { stringValue: string }[] } };
  }[];
}

/** An OTLP/HTTP receiver in the test process: keeps every span it is sent (JSON encoding). */
async function startOtlpReceiver(): Promise<{ url: string; spans: OtlpSpan[]; paths: string[]; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      paths.push(req.url ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    paths,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function attr(span: OtlpSpan, key: string): unknown {
  const v = span.attributes.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  if (v.arrayValue) return v.arrayValue.values.map((x) => x.stringValue);
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.boolValue);
}

/** How a provider of each format says the answer ended of itself. */
const FINISHED: Record<WireFormat, string> = { chat: 'stop', messages: 'end_turn', responses: 'completed', gemini: 'STOP' };

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

describeEachStore('tracing: one span tree per edge request, GenAI attributes, W3C traceparent through', (store) => {
  for (const format of FORMATS) {
    it(`${format}: a streamed call exports request, key lookup, admission, upstream and settlement spans under the client's trace`, async function () {
      this.timeout(30_000);
      const receiver = await startOtlpReceiver();
      let dp: DataPlane | undefined;
      try {
        dp = await startDataPlane(store, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
        const key = await seedKey(dp.cp.deps);
        const body = modelBody(format, { stream: true });
        const { url, init } = edgeRequest(dp.proxy.url, format, key.slug, key.secret, body, {
          headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` },
        });
        const res = await fetch(url, init);
        expect(res.status).to.equal(200);
        await res.text();
        await dp.proxy.drain();
        const upstreamTraceparent = dp.fake.requests[0]!.headers.traceparent;
        const sent = dp.fake.requests[0]!;
        // Closing the proxy sends what the exporter still holds.
        await dp.close();
        dp = undefined;

        expect(receiver.paths.every((p) => p === '/v1/traces')).to.equal(true);
        const spans = receiver.spans.filter((s) => s.traceId === TRACE_ID);
        const root = spans.find((s) => s.parentSpanId === CLIENT_SPAN);
        expect(root, 'the request span, child of the client span').to.not.equal(undefined);
        expect(root!.name).to.equal('chat tg/sonnet');
        expect(root!.kind).to.equal(2); // SERVER
        expect(attr(root!, 'gen_ai.operation.name')).to.equal('chat');
        // The API the provider was called in: a translated call's is the provider's, not the client's.
        expect(attr(root!, 'gen_ai.system')).to.equal(WIRE[servedAs(format)].genAiSystem);
        expect(attr(root!, 'gen_ai.provider.name')).to.equal('primary');
        expect(attr(root!, 'gen_ai.request.model')).to.equal('tg/sonnet');
        expect(attr(root!, 'gen_ai.response.model')).to.equal('claude-sonnet-4-5');
        // The fake counts the conversation it was sent, in whichever format.
        expect(attr(root!, 'gen_ai.usage.input_tokens')).to.equal(recordedInputTokens(sent));
        expect(attr(root!, 'gen_ai.usage.output_tokens')).to.equal(12);
        // A call on tg/sonnet's provider in another format is translated: the finish reason is the one the provider gave.
        expect(attr(root!, 'gen_ai.response.finish_reasons')).to.deep.equal([FINISHED[servedAs(format)]]);
        expect(attr(root!, 'http.response.status_code')).to.equal(200);

        const children = spans.filter((s) => s.parentSpanId === root!.spanId);
        expect(children.map((s) => s.name).sort()).to.deep.equal(['admission', 'key lookup', 'settlement', 'upstream call']);
        const upstream = children.find((s) => s.name === 'upstream call')!;
        expect(upstream.kind).to.equal(3); // CLIENT
        // The provider was told it runs under the upstream call's span.
        expect(upstreamTraceparent).to.equal(`00-${TRACE_ID}-${upstream.spanId}-01`);
        for (const child of children) {
          expect(BigInt(child.endTimeUnixNano) >= BigInt(child.startTimeUnixNano), child.name).to.equal(true);
        }
      } finally {
        await dp?.close();
        await receiver.close();
      }
    });
  }
});
