import { randomBytes } from 'node:crypto';

/** Ids that differ across fakes and runs, yet cost nothing per request. */
export class IdSource {
  private readonly prefix = randomBytes(6).toString('hex');
  private counter = 0;

  next(kind: 'chatcmpl-' | 'msg_' | 'req_' | 'toolu_' | 'call_' | 'resp_' | 'fc_' | 'rs_' | 'cmp_'): string {
    return `${kind}${this.prefix}${(++this.counter).toString(36)}`;
  }
}
