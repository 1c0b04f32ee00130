import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDomainStatus } from '../../../../nc/ha/heartbeat/domainStatus.js';

// Recorded from libvirt 9.0 (the lab's host1/run/qemu/t1.xml): a running TCG guest with one raw disk.
const REAL = readFileSync(join(import.meta.dirname, 'libvirt-status.xml'), 'utf8');

const status = (inner: string, attrs = "state='running' pid='4242'"): string =>
  `<domstatus ${attrs}><domain type='qemu' id='3'><name>i-1</name><devices>${inner}</devices></domain></domstatus>`;

describe('parseDomainStatus', () => {
  it('reads the name, QEMU pid and disk of a real libvirt status file', () => {
    expect(parseDomainStatus(REAL)).toEqual({ name: 't1', pid: 5188, disks: ['/tmp/ferry-lab-ha/shared/disks/t1.img'] });
  });

  it.each([
    ['no disks', status(''), { name: 'i-1', pid: 4242, disks: [] }],
    ['file disks in device order', status("<disk type='file'><source file='/s/a.img'/></disk><disk type='file'><source file='/s/b.img'/></disk>"),
      { name: 'i-1', pid: 4242, disks: ['/s/a.img', '/s/b.img'] }],
    ['a network disk is not a file', status("<disk type='network'><source protocol='rbd' name='pool/x'/></disk>"), { name: 'i-1', pid: 4242, disks: [] }],
    ['a source outside a disk is ignored', status("<interface type='user'><source file='/s/not-a-disk'/></interface>"), { name: 'i-1', pid: 4242, disks: [] }],
  ])('%s', (_, xml, want) => {
    expect(parseDomainStatus(xml)).toEqual(want);
  });

  it.each([
    ['no pid', status('', "state='running'")],
    ['a pid that is no number', status('', "pid='x'")],
    ['pid 1 (never a QEMU)', status('', "pid='1'")],
    ['a plain domain XML (inactive config, no domstatus)', "<domain type='qemu'><name>i-1</name></domain>"],
    ['no name', "<domstatus pid='5'><domain type='qemu'/></domstatus>"],
    ['truncated', REAL.slice(0, REAL.length / 2)],
    ['empty', ''],
  ])('refuses %s', (_, xml) => {
    expect(parseDomainStatus(xml)).toBeUndefined();
  });

  it('never throws, whatever the bytes', () => {
    fc.assert(fc.property(fc.string(), (s) => {
      const r = parseDomainStatus(s);
      expect(r === undefined || (r.pid > 1 && r.name.length > 0)).toBe(true);
    }));
  });
});
