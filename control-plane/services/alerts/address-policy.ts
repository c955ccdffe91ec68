import { BlockList, isIP } from 'node:net';
import type { Config } from '../../../shared/config.js';

/** Which webhook targets may be reached: only public addresses unless the operator allowed private ones. */
export interface TargetPolicy {
  allowPrivate: boolean;
  /** The service's own ports: never a receiver on a loopback or private address, allowed or not. */
  ownPorts: readonly number[];
}

export function targetPolicy(config: Config): TargetPolicy {
  return { allowPrivate: config.alerts.allowPrivateUrls, ownPorts: [config.controlPlanePort, config.proxyPort, config.ops.metricsPort] };
}

/**
 * Loopback, private, link-local, unique-local, carrier-grade NAT, "this
 * network", benchmarking, multicast and reserved ranges: nothing a public
 * webhook receiver lives at, and everything a forged request could reach
 * inside the operator's network.
 */
function nonPublicRanges(): BlockList {
  const list = new BlockList();
  for (const [net, bits] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['224.0.0.0', 3],
  ] as const) {
    list.addSubnet(net, bits, 'ipv4');
  }
  for (const [net, bits] of [
    ['::', 127],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
  ] as const) {
    list.addSubnet(net, bits, 'ipv6');
  }
  return list;
}

const NON_PUBLIC = nonPublicRanges();

/** An IPv4 address carried inside an IPv6 one (::ffff:a.b.c.d, 64:ff9b::a.b.c.d) is judged as that IPv4 address. */
function embeddedIpv4(ip: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(?:0:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (m) return m[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (!hex) return undefined;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function isNonPublicAddress(ip: string): boolean {
  const v4 = isIP(ip) === 6 ? embeddedIpv4(ip) : undefined;
  if (v4) return NON_PUBLIC.check(v4, 'ipv4');
  const family = isIP(ip);
  if (family === 0) return true;
  return NON_PUBLIC.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why `ip:port` may not be a webhook target under the policy, or null when it may. */
export function refusedTarget(ip: string, port: number, policy: TargetPolicy): string | null {
  if (!isNonPublicAddress(ip)) return null;
  if (!policy.allowPrivate)
    return `${ip} is a loopback, private or link-local address (set ALERTS_ALLOW_PRIVATE_URLS=true for on-premises receivers)`;
  if (policy.ownPorts.includes(port)) return `${ip}:${port} is one of this service's own ports`;
  return null;
}
