import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { serverIpOfInstanceValue } from '../../lib/job/instance/instance.service.js';

/** What a YAML parser reads as the node's server (the way every value was read before the plain form's shortcut). */
function parsedServerIp(value: string): unknown {
  return (parse(value) as { serverIp?: unknown }).serverIp;
}

describe('an instance node read without a YAML parser when it is the plain two-line form', () => {
  const ips = [
    '10.0.0.1',
    '192.168.100.254',
    '127.0.0.1',
    'fe80::1',
    '::1',
    '2001:db8::8a2e:370:7334',
    '::ffff:10.0.0.1',
  ];
  it.each(ips)('reads %s as the parser does', (ip) => {
    const id = `${ip}@-@4242`;
    const value = stringify({ jobInstanceId: id, serverIp: ip }); // as we and ElasticJob write it
    expect(serverIpOfInstanceValue(id, value)).toBe(ip);
    expect(serverIpOfInstanceValue(id, value)).toBe(parsedServerIp(value));
  });

  it('parses every other form, and falls back to the id for values that do not name a server', () => {
    // Quoted, reordered, with labels (ElasticJob's JobInstance has them), a number-like address, garbage.
    expect(serverIpOfInstanceValue('1.2.3.4@-@1', "jobInstanceId: 1.2.3.4@-@1\nserverIp: '10.0.0.9'\n")).toBe(
      '10.0.0.9',
    );
    expect(serverIpOfInstanceValue('1.2.3.4@-@1', 'serverIp: 10.0.0.9\njobInstanceId: 1.2.3.4@-@1\n')).toBe('10.0.0.9');
    expect(serverIpOfInstanceValue('1.2.3.4@-@1', 'jobInstanceId: 1.2.3.4@-@1\nlabels: a\nserverIp: 10.0.0.9\n')).toBe(
      '10.0.0.9',
    );
    expect(serverIpOfInstanceValue('1.2.3.4@-@1', 'jobInstanceId: 1.2.3.4@-@1\nserverIp: 12\n')).toBe('1.2.3.4');
    expect(serverIpOfInstanceValue('1.2.3.4@-@1', '{not: [yaml')).toBe('1.2.3.4');
    // Another id's line is not taken as this node's.
    expect(serverIpOfInstanceValue('1.2.3.4@-@1', 'jobInstanceId: 9.9.9.9@-@1\nserverIp: 10.0.0.9\n')).toBe('10.0.0.9');
  });
});
