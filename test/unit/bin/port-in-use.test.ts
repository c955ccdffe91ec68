import { expect } from 'chai';
import { createServer } from 'node:net';
import { portInUse } from '../../../bin/run.js';
import { testConfig } from '../../support/control-plane.js';

describe('a port already in use', () => {
  it('names the variable that chose it, from the error listen() gives', async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const { port } = holder.address() as { port: number };
    try {
      const err = await new Promise<NodeJS.ErrnoException & { port?: number; address?: string }>((resolve) => {
        const second = createServer();
        second.once('error', resolve);
        second.listen(port, '127.0.0.1');
      });
      expect(err.code).to.equal('EADDRINUSE');
      const config = testConfig({ CONTROL_PLANE_PORT: String(port), PROXY_PORT: String(port + 1) });
      expect(portInUse(config, err)).to.equal(
        `port ${port} is already in use (127.0.0.1:${port}); stop what holds it or choose another with CONTROL_PLANE_PORT.`,
      );
      expect(portInUse(testConfig({ PROXY_PORT: String(port) }), err)).to.include('choose another with PROXY_PORT.');
    } finally {
      holder.close();
    }
  });
});
