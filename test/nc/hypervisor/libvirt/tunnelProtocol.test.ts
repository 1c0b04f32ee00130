/** The tunnel's header lines (pure): any bytes give a hello, an answer or a coded refusal, never a throw. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeAnswer, decodeHello, encodeAnswer, encodeHello } from '../../../../nc/hypervisor/libvirt/tunnelProtocol.js';
import { tunnelRoute } from '../../../../nc/hypervisor/libvirt/migrationParams.js';

const range = { min: 17600, max: 17699 };

describe('tunnel protocol', () => {
  it.each([
    ['a hello in range', encodeHello(17650).trim(), { port: 17650 }],
    ['below the range', encodeHello(22).trim(), { ok: false, reason: 'port' }],
    ['above the range', encodeHello(17700).trim(), { ok: false, reason: 'port' }],
    ['another version', '{"v":2,"port":17650}', { ok: false, reason: 'protocol' }],
    ['a fractional port', '{"v":1,"port":17650.5}', { ok: false, reason: 'protocol' }],
    ['not JSON', 'GET / HTTP/1.1', { ok: false, reason: 'protocol' }],
    ['null', 'null', { ok: false, reason: 'protocol' }],
  ])('decodes %s', (_name, line, want) => {
    expect(decodeHello(line, range)).toMatchObject(want);
  });

  it('round-trips answers', () => {
    expect(decodeAnswer(encodeAnswer({ ok: true }).trim())).toEqual({ ok: true });
    const refused = { ok: false as const, reason: 'expired' as const, detail: 'expired at then' };
    expect(decodeAnswer(encodeAnswer(refused).trim())).toEqual(refused);
  });

  it('any line is a hello, an answer or a refusal; a hello is always in range', () => {
    fc.assert(fc.property(fc.string(), (line) => {
      const h = decodeHello(line, range);
      if ('port' in h) expect(h.port >= range.min && h.port <= range.max).toBe(true);
      else expect(['protocol', 'port']).toContain(h.reason);
      const a = decodeAnswer(line);
      expect(typeof a.ok).toBe('boolean');
    }));
  });

  it('routes QEMU to the local end and the destination QEMU to its own local address, same port', () => {
    expect(tunnelRoute('127.0.0.1', '127.0.0.1', 49152)).toEqual({ uri: 'tcp://127.0.0.1:49152', listenAddress: '127.0.0.1' });
    expect(tunnelRoute('127.0.57.1', '127.0.57.2', 17601)).toEqual({ uri: 'tcp://127.0.57.1:17601', listenAddress: '127.0.57.2' });
  });
});
