import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { plainInstanceServerIp, serverIpOfInstanceValue } from '../../lib/job/instance/instance.service.js';
import { serverIpOfInstance } from '../../lib/job/paths.js';

/** How every instance node was read before the plain form's shortcut: the parser's `serverIp`, else the id's. */
function asParsed(id: string, value: string): string {
  try {
    const serverIp = (parse(value) as { serverIp?: unknown } | null)?.serverIp;
    if (typeof serverIp === 'string' && serverIp !== '') return serverIp;
  } catch {
    // the id's
  }
  return serverIpOfInstance(id);
}

describe('an instance node read without a YAML parser when it is the plain two-line form', () => {
  const plain = [
    '10.0.0.1',
    '192.168.100.254',
    '127.0.0.1',
    'fe80::1',
    '2001:db8::8a2e:370:7334',
    'FE80:0:0:0:0:0:0:1',
  ];
  const parsed = ['::1', '::ffff:10.0.0.1', '2001:db8::', 'fe80:', 'localhost', '12', '1.5'];

  it.each(plain)('reads %s without the parser, as the parser does', (ip) => {
    const id = `${ip}@-@4242`;
    const value = stringify({ jobInstanceId: id, serverIp: ip }); // as we and ElasticJob write it
    expect(plainInstanceServerIp(value)).toBe(ip);
    expect(serverIpOfInstanceValue(id, value)).toBe(asParsed(id, value));
  });

  it.each(parsed)('leaves %s to the parser', (ip) => {
    const id = `10.0.0.7@-@4242`;
    for (const value of [stringify({ jobInstanceId: id, serverIp: ip }), `jobInstanceId: ${id}\nserverIp: ${ip}\n`]) {
      expect(plainInstanceServerIp(value)).toBeUndefined();
      expect(serverIpOfInstanceValue(id, value)).toBe(asParsed(id, value));
    }
  });

  it('parses every other form, and falls back to the id for values that do not name a server', () => {
    // Quoted, reordered, with labels (ElasticJob's JobInstance has them), a number, garbage.
    const id = '1.2.3.4@-@1';
    for (const value of [
      `jobInstanceId: ${id}\nserverIp: '10.0.0.9'\n`,
      `serverIp: 10.0.0.9\njobInstanceId: ${id}\n`,
      `jobInstanceId: ${id}\nlabels: a\nserverIp: 10.0.0.9\n`,
      `jobInstanceId: ${id}\nserverIp: 12\n`,
      '{not: [yaml',
    ]) {
      expect(plainInstanceServerIp(value)).toBeUndefined();
      expect(serverIpOfInstanceValue(id, value)).toBe(asParsed(id, value));
    }
    expect(serverIpOfInstanceValue(id, `jobInstanceId: ${id}\nserverIp: 12\n`)).toBe('1.2.3.4');
  });
});
