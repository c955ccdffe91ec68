import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch, type Dispatcher } from 'undici';
import { AppError } from '../../../shared/errors.js';

/**
 * Outbound requests to URLs a tenant chose (an SSO issuer, a webhook): they
 * must not reach the server's own network. The check runs when the socket
 * connects, on every address the name resolves to, so a name that resolves
 * to a public address when a setting is saved and to 127.0.0.1 later (DNS
 * rebinding) is refused too.
 */

export interface OutboundPolicy {
  /** Loopback, private, link-local, unique-local and unspecified targets (and plain http) allowed: tests, an IdP on the internal network. */
  allowPrivate: boolean;
  /**
   * The service's own ports: a private address on one of them is refused even
   * when private targets are allowed, so a tenant's URL cannot turn the
   * service on itself (its admin API, its metrics).
   */
  ownPorts?: readonly number[];
}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** An IPv4 address carried in IPv6 (::ffff:a.b.c.d, NAT64 64:ff9b::/96): judged as the IPv4 address it reaches. */
function embeddedIpv4(address: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const hi = parseInt(m[2]!, 16);
  const lo = parseInt(m[3]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Whether an IP address is loopback, private, link-local, unique-local, multicast or unspecified. Not an IP: false. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return false;
  if (family === 4) return blocked.check(bare, 'ipv4');
  const v4 = embeddedIpv4(bare);
  return v4 !== undefined ? blocked.check(v4, 'ipv4') : blocked.check(bare, 'ipv6');
}

const PRIVATE_REFUSAL = 'is on a loopback, private or link-local network, which this server does not call';

/** Why a connection to `address` (an IP) on `port` is refused under the policy, or undefined when it may go ahead. */
export function addressRefusal(address: string, port: number, policy: OutboundPolicy): string | undefined {
  if (!isPrivateAddress(address)) return undefined;
  if (!policy.allowPrivate) return PRIVATE_REFUSAL;
  if (policy.ownPorts?.includes(port)) return `is on a loopback or private network at port ${port}, one of this service's own ports`;
  return undefined;
}

/** The refusal of a destination: names the host, never the address it resolved to (that would map the internal network). */
export class BlockedDestination extends Error {
  readonly code = 'TOLLGATE_BLOCKED_DESTINATION';
  constructor(
    readonly host: string,
    reason: string = PRIVATE_REFUSAL,
  ) {
    super(`refused: ${host} ${reason}`);
  }
}

/**
 * Why `raw` may not be called, or undefined when it may (as far as can be
 * told without resolving it): https only, no credentials in the URL, and no
 * private IP literal, unless the policy allows private targets (which also
 * allows http). For a clear answer when a setting is saved; the connect-time
 * check of the dispatcher is what holds.
 */
export function urlRefusal(raw: string, policy: OutboundPolicy): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (u.username || u.password) return 'must not carry credentials';
  if (u.protocol !== 'https:' && !(policy.allowPrivate && u.protocol === 'http:')) {
    return policy.allowPrivate ? 'must be an http or https URL' : 'must be an https URL';
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && (isPrivateAddress(host) || host === 'localhost' || host.endsWith('.localhost'))) {
    return 'must not name a loopback, private or link-local address';
  }
  return undefined;
}

/** dns.lookup that fails when any address a name resolves to is refused by the policy for this port. */
function guardedLookup(policy: OutboundPolicy, port: number): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (addresses.length === 0) return callback(new BlockedDestination(hostname, 'resolves to no address'), '', 0);
      for (const a of addresses) {
        const why = addressRefusal(a.address, port, policy);
        if (why) return callback(new BlockedDestination(hostname, why), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

export interface GuardedDispatcherOptions {
  connectTimeoutMs?: number;
  /** The wait for the answer's headers and between its body's chunks. */
  timeoutMs?: number;
}

/**
 * An undici dispatcher that refuses, at connect time, any destination that
 * is (or resolves to) an address the policy refuses. The connector connects
 * to the address the lookup checked, so a second resolution cannot swap it.
 * IP literals skip DNS, so they are checked before connecting.
 */
export function createGuardedDispatcher(policy: OutboundPolicy, options: GuardedDispatcherOptions = {}): Dispatcher {
  const timeouts = { headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs };
  if (policy.allowPrivate && !policy.ownPorts?.length) return new Agent({ connect: { timeout: options.connectTimeoutMs }, ...timeouts });
  // The own-ports rule depends on the port, which the lookup is not told: one connector per port.
  const connectors = new Map<number, buildConnector.connector>();
  const connectorFor = (port: number): buildConnector.connector => {
    let connector = connectors.get(port);
    if (!connector) {
      connector = buildConnector({ lookup: guardedLookup(policy, port), timeout: options.connectTimeoutMs });
      connectors.set(port, connector);
    }
    return connector;
  };
  return new Agent({
    ...timeouts,
    connect(opts, callback) {
      const host = opts.hostname.replace(/^\[|\]$/g, '');
      const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
      const why = isIP(host) ? addressRefusal(host, port, policy) : undefined;
      if (why) return callback(new BlockedDestination(opts.hostname, why), null);
      connectorFor(port)(opts, callback);
    },
  });
}

/**
 * A fetch for tenant-chosen URLs: the URL rules of urlRefusal, then the
 * guarded dispatcher. A refusal is a TypeError like any unreachable host, with
 * the BlockedDestination (or the URL's refusal) as its cause.
 */
export function createGuardedFetch(policy: OutboundPolicy, dispatcher: Dispatcher = createGuardedDispatcher(policy)) {
  return async function guardedFetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const href = url instanceof URL ? url.href : url;
    const refusal = urlRefusal(href, policy);
    if (refusal) throw new TypeError(`fetch refused: the URL ${refusal}`, { cause: new AppError('invalid_input', `The URL ${refusal}.`) });
    // undici's own fetch: the global one may belong to another undici and not take this dispatcher.
    return (await undiciFetch(href, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as Response;
  };
}
