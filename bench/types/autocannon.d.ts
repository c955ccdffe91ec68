// autocannon ships no type declarations; this covers the part the bench uses.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      connections?: number;
      duration?: number;
      timeout?: number;
    }
    interface Result {
      requests: { total: number };
      errors: number;
      timeouts: number;
      non2xx: number;
      duration: number;
    }
    interface Instance extends EventEmitter {
      stop(): void;
    }
  }
  function autocannon(options: autocannon.Options): autocannon.Instance;
  export default autocannon;
}
