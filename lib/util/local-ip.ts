import { networkInterfaces } from 'node:os';

/**
 * The IP this instance registers under, like ElasticJob's IpUtils: the last up, non-internal interface
 * with an IPv4 address, else 127.0.0.1. Override with `instance.ip` in containers and on multi-NIC hosts.
 */
export function detectLocalIp(): string {
  let picked: string | undefined;
  for (const addresses of Object.values(networkInterfaces())) {
    const ipv4 = (addresses ?? []).find((a) => a.family === 'IPv4' && !a.internal && a.address !== '0.0.0.0');
    if (ipv4) picked = ipv4.address;
  }
  return picked ?? '127.0.0.1';
}

export const IPV4_PATTERN = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
