import { describe, expect, it } from 'vitest';
import { activityTarget, planBeat, type BeatInput } from '../../../../nc/ha/heartbeat/beatPlan.js';
import type { DomainStatus } from '../../../../nc/ha/heartbeat/domainStatus.js';

const S = '/mnt/shared';
const H = '127.0.55.1';
const dom = (name: string, ...disks: string[]): DomainStatus => ({ name, pid: 100, disks });
const input = (domains: DomainStatus[] | undefined, links: [string, string][] = []): BeatInput =>
  ({ host: H, storageDir: S, now: 1_000, pid: 7, domains, links: new Map(links) });

describe('activityTarget', () => {
  it.each([
    ['a disk on shared storage: relative from the host directory', ['/mnt/shared/disks/i-1.img'], '../disks/i-1.img'],
    ['the first shared disk wins', ['/var/lib/libvirt/images/a.img', '/mnt/shared/disks/b.img', '/mnt/shared/disks/c.img'], '../disks/b.img'],
    ['a local disk says nothing to a neighbour', ['/var/lib/libvirt/images/a.img'], undefined],
    ['a sibling directory with the same prefix is not shared storage', ['/mnt/shared2/x.img'], undefined],
    ['a relative path is refused', ['disks/x.img'], undefined],
    ['no disks (a firmware-only guest)', [], undefined],
  ])('%s', (_, disks, want) => {
    expect(activityTarget(S, `${S}/${H}`, disks)).toBe(want);
  });
});

describe('planBeat', () => {
  it('writes one JSON heartbeat line naming the host, time, pid and running count', () => {
    expect(JSON.parse(planBeat(input([dom('i-1')])).heartbeat)).toEqual({ host: H, writtenAt: 1_000, pid: 7, running: 1 });
  });

  it.each([
    ['a new domain gets its link', [dom('i-1', '/mnt/shared/disks/i-1.img')], [], [['i-1.disk', '../disks/i-1.img']], []],
    ['an unchanged link is left alone', [dom('i-1', '/mnt/shared/disks/i-1.img')], [['i-1.disk', '../disks/i-1.img']], [], []],
    ['a link to another disk is re-pointed', [dom('i-1', '/mnt/shared/disks/new.img')], [['i-1.disk', '../disks/old.img']], [['i-1.disk', '../disks/new.img']], []],
    ['a domain gone from this host loses its link', [], [['i-1.disk', '../disks/i-1.img']], [], ['i-1.disk']],
    ['a domain without a shared disk gets none (and loses an old one)', [dom('i-1', '/local/i-1.img')], [['i-1.disk', '../disks/i-1.img']], [], ['i-1.disk']],
    ['an unsafe domain name is never a file name', [dom('../evil', '/mnt/shared/disks/x.img'), dom('.hidden', '/mnt/shared/disks/y.img')], [], [], []],
  ] as [string, DomainStatus[], [string, string][], [string, string][], string[]][])('%s', (_, domains, links, wantLink, wantUnlink) => {
    const plan = planBeat(input(domains, links));
    expect([...plan.link]).toEqual(wantLink);
    expect(plan.unlink).toEqual(wantUnlink);
  });

  it('touches no link when the domains could not be read, and says so in the heartbeat', () => {
    const plan = planBeat(input(undefined, [['i-1.disk', '../disks/i-1.img']]));
    expect(plan.link.size).toBe(0);
    expect(plan.unlink).toEqual([]);
    expect(JSON.parse(plan.heartbeat)).toMatchObject({ running: null });
  });
});
