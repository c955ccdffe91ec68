import { expect } from 'chai';
import { luaString, wrkScript } from '../../../bench/lib/load.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { processTree, statCpuTicks } from '../../../bench/lib/procs.js';
import { latencyOf } from '../../../bench/lib/stats.js';
import { chatBody, messagesBody, responsesBody, BODY_BYTES } from '../../../bench/lib/bodies.js';
import { measureResponsesCost, RESPONSES_ROUTES } from '../../../bench/lib/responses-cost.js';

describe('bench harness helpers', () => {
  it('reads utime + stime from a /proc stat line whose command name holds spaces and parentheses', () => {
    const line = '4242 (node (tsx) a b) S 1 4242 4242 0 -1 4194304 100 0 0 0 1234 567 0 0 20 0 11 0 100 0 0';
    expect(statCpuTicks(line)).to.equal(1234 + 567);
  });

  it('refuses a stat line it cannot read rather than reporting zero CPU', () => {
    expect(() => statCpuTicks('garbage')).to.throw(/unreadable/);
  });

  it('takes percentiles by nearest rank', () => {
    const samples = Array.from({ length: 1000 }, (_, i) => i + 1);
    const l = latencyOf(samples.reverse());
    expect(l.p50).to.equal(500);
    expect(l.p99).to.equal(990);
    expect(l.p999).to.equal(999);
    expect(l.max).to.equal(1000);
    expect(l.mean).to.equal(500.5);
  });

  it('reports NaN percentiles for no samples instead of zero latency', () => {
    expect(latencyOf([]).p50).to.be.NaN;
  });

  it('quotes Lua strings with a bracket level the content cannot close', () => {
    expect(luaString('plain')).to.equal('[=[plain]=]');
    expect(luaString('a]=]b')).to.equal('[==[a]=]b]==]');
  });

  it('never writes `[[` after a table index (Lua would read a long string there)', () => {
    const script = wrkScript({
      url: 'http://127.0.0.1:1/',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      connections: 1,
      durationS: 1,
    });
    expect(script).to.not.match(/headers\[\[/);
    expect(script).to.contain('wrk.headers[ [=[content-type]=] ] = [=[application/json]=]');
  });

  it('builds request bodies of about 1 KB that parse as JSON', () => {
    for (const body of [chatBody('tg/bench'), messagesBody('tg/bench'), chatBody('tg/bench', { stream: true }), responsesBody('tg/bench')]) {
      expect(body.length).to.be.within(BODY_BYTES - 64, BODY_BYTES);
      expect(() => JSON.parse(body) as unknown).to.not.throw();
    }
    expect((JSON.parse(messagesBody('m')) as { max_tokens: number }).max_tokens).to.be.a('number');
  });

  it('measures a Responses call on each route in the provider format that route names (pass-through, Chat, Messages)', () => {
    // measureResponsesCost throws when a route's provider is called in another format than it claims.
    const cost = measureResponsesCost(50, 500);
    for (const route of RESPONSES_ROUTES) {
      expect(cost.requestUs[route], route).to.be.greaterThan(0);
      expect(cost.eventUs[route], route).to.be.greaterThan(0);
    }
  });

  it("finds a process tree's grandchildren (the `npm start` tree is npm, its shell, and node)", async () => {
    // A shell that starts a child which starts its own: two levels below the one we know.
    const shell = spawn('sh', ['-c', 'sh -c "sleep 5 & wait" & wait'], { stdio: 'ignore' });
    try {
      let tree: number[] = [];
      for (let i = 0; i < 50 && tree.length < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        tree = processTree(shell.pid!);
      }
      expect(tree[0]).to.equal(shell.pid);
      expect(tree).to.have.length(3);
    } finally {
      const exited = once(shell, 'exit');
      for (const pid of processTree(shell.pid!).reverse()) process.kill(pid, 'SIGKILL');
      await exited;
    }
  });
});
