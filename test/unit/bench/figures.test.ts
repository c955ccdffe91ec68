import { expect } from 'chai';
import { overheadRatios, type LoadFigures } from '../../../bench/scenarios/overhead.js';
import { capacityOf } from '../../../bench/scenarios/scale-out.js';
import { listenOverflows } from '../../../bench/lib/sockets.js';
import { cpuPerStream, plateauOf, projectStreams, type StreamsSample } from '../../../bench/scenarios/streams.js';

function load(system: string, cpu: number, rps: number, p99: number, errors = 0): LoadFigures {
  return {
    system,
    format: 'chat',
    connections: 50,
    tool: 'wrk',
    requests: 1000,
    errors,
    non2xx: 0,
    durationS: 1,
    rps,
    latencyUs: { p50: p99 / 2, p99, p999: p99, mean: p99 / 2, max: p99 },
    cpuUsPerRequest: cpu,
    controlPlaneCpuUsPerRequest: undefined,
    sutCoreUse: 1,
    upstreamCoreUse: 0.5,
    controlPlaneDrainS: 0,
  };
}

describe('bench scenario figures', () => {
  it('sets Tollgate against both bare and the floor in the same run', () => {
    const [r] = overheadRatios([load('tollgate', 100, 9000, 20_000), load('bare', 80, 10_000, 10_000), load('floor', 50, 12_000, 8_000)]);
    expect(r).to.include({ format: 'chat', connections: 50, cpuBare: 1.25, cpuFloor: 2, rpsBare: 0.9, rpsFloor: 0.75, p99Bare: 2, p99Floor: 2.5 });
    expect(r!.floorCpuBare).to.equal(50 / 80);
  });

  it('leaves a ratio out (NaN) when a system mostly failed rather than comparing error handling', () => {
    const [r] = overheadRatios([load('tollgate', 100, 9000, 20_000), load('bare', 80, 10_000, 10_000), load('floor', 50, 12_000, 8_000, 500)]);
    expect(r!.cpuBare).to.equal(1.25);
    expect(r!.cpuFloor).to.be.NaN;
  });

  it('takes CPU per event and RSS from the seconds every stream was open, not the ramp or the tail', () => {
    const s = (t: number, open: number, events: number, cpuUs: number, rssBytes: number): StreamsSample => ({
      t,
      open,
      events,
      done: 0,
      errors: 0,
      cpuUs,
      rssBytes,
    });
    const p = plateauOf([
      s(1, 50, 10, 1_000, 100),
      s(2, 100, 80, 9_000, 300),
      s(3, 100, 180, 12_000, 500),
      s(4, 99, 280, 15_000, 400),
      s(5, 20, 300, 40_000, 900),
    ]);
    expect(p.seconds).to.equal(2);
    expect(p.cpuUsPerEvent).to.equal((15_000 - 9_000) / (280 - 80));
    expect(p.peakRssBytes).to.equal(500);
    expect(p.medianRssBytes).to.equal(400);
  });

  it('reports no CPU per event when no stream ever opened', () => {
    expect(plateauOf([]).cpuUsPerEvent).to.be.NaN;
  });

  it('projects memory, cores and open files linearly from the per-stream figures', () => {
    const p = projectStreams(10_000, 100 * 2 ** 20, 32 * 1024, 20);
    expect(p.rssBytes).to.equal(100 * 2 ** 20 + 10_000 * 32 * 1024);
    expect(p.cores).to.equal(0.2);
    expect(p.openFiles).to.equal(20_100);
  });

  it("charges a stream's opening and closing with the run's CPU beyond its events", () => {
    expect(cpuPerStream(1_000_000, 20_000, 30, 100)).to.equal(4_000);
    expect(cpuPerStream(1_000_000, 20_000, NaN, 100)).to.be.NaN;
  });

  it('reads accept-queue overflows by name from the TcpExt lines of /proc/net/netstat', () => {
    const netstat = 'TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 5 1234 1300\nIpExt: InNoRoutes\nIpExt: 0\n';
    expect(listenOverflows(netstat)).to.equal(1234);
    expect(listenOverflows('IpExt: InNoRoutes\nIpExt: 0\n')).to.be.NaN;
  });

  it('counts settlement capacity per core of the control plane, not per wall second', () => {
    const c = capacityOf(4, 50_000, 2, 500_000, 1_000_000);
    expect(c.perSecond).to.equal(25_000);
    expect(c.controlPlaneUsPerReport).to.equal(10);
    expect(c.perSecondPerCore).to.equal(100_000);
    expect(c.controlPlaneCoreUse).to.equal(0.25);
    expect(c.databaseUsPerReport).to.equal(20);
  });
});
