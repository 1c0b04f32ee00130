/**
 * The libvirt HA lab's hosts (libvirtHa.test.ts, libvirtPauseFence.test.ts): each libvirt "host" of
 * scripts/libvirt-lab.sh is one process group behind its own ipmi_sim BMC (scripts/fencing-lab.sh):
 * its libvirtd under tini (so the QEMUs it starts go with a power-off), then ferry-heartbeat and the
 * NC, started by the BMC's power-on. Then host HA is configured for the cluster (fence_ipmilan) and
 * switched on. The caller starts nothing else first but the lab (prepareLab, buildGuest).
 */
import { mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, type TestCloud } from './cloud.js';
import { adminCall } from './cloudApi.js';
import { haSettingParams, startLabBmc, type LabBmc } from './fencingLab.js';
import { runHostCommand, type Lab } from './libvirtLab.js';

export interface LibvirtHaHosts {
  readonly lab: Lab;
  /** The lab libvirtd's URI on a host. */
  readonly uriOf: (host: string) => string;
  /** The first host's BMC port; the i-th host's is this + i. */
  readonly bmcPort: number;
  readonly user: string;
  readonly password: string;
  /** Host HA's cluster settings (ConfigureHAForCluster), by setting name. */
  readonly settings: Readonly<Record<string, number>>;
}

/** Powers every host on through its BMC, starts the CC and CLC, and enables host HA; answers the BMCs by host. */
export async function startLibvirtHaCloud(cloud: TestCloud, o: LibvirtHaHosts): Promise<Map<string, LabBmc>> {
  const bmcs = new Map<string, LabBmc>();
  mkdirSync(join(cloud.baseDir, 'storage', 'disks'), { recursive: true });
  mkdirSync(join(cloud.baseDir, 'logs'), { recursive: true });
  const sh = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  for (const [i, host] of cloud.nodeHosts.entries()) {
    const dir = join(cloud.baseDir, 'bmc', host);
    mkdirSync(dir, { recursive: true });
    const log = (name: string): string => sh(join(cloud.baseDir, 'logs', `${name}-${host}.log`));
    const node = (name: string): string => {
      const s = cloud.spec(`${name}-${host}`);
      return `node ${sh(join(ROOT, s.entry))} ${s.args.map(sh).join(' ')} >>${log(name)} 2>&1 & echo $! >${sh(join(dir, `${name}.pid`))}`;
    };
    // The host: libvirtd first (the NC needs it), then its agents; all in the BMC's process group.
    await writeFile(join(cloud.baseDir, `host-${host}.sh`), [
      '#!/usr/bin/env bash',
      `${runHostCommand(o.lab, (i + 1) as 1 | 2).map(sh).join(' ')} >>${log('libvirtd')} 2>&1 &`,
      `for _ in $(seq 600); do virsh -q -c ${sh(o.uriOf(host))} uri >/dev/null 2>&1 && break; sleep 0.1; done`,
      node('heartbeat'),
      node('nc'),
      'wait',
    ].join('\n'));
    bmcs.set(host, await startLabBmc({ addr: host, port: o.bmcPort + i, user: o.user, password: o.password, hostCommand: ['bash', join(cloud.baseDir, `host-${host}.sh`)], dir }));
  }
  await cloud.start(['cc', 'clc']);
  const q = (params: Record<string, string>): Promise<unknown> => adminCall(cloud, params);
  await q({ Action: 'ConfigureHAForCluster', ...haSettingParams(o.settings) });
  await q({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', MaxUnhealthy: '1' });
  for (const [i, host] of cloud.nodeHosts.entries()) {
    await q({ Action: 'ConfigureHAForHost', Host: host, Agent: 'fence_ipmilan', Address: host, Port: String(o.bmcPort + i), Username: o.user, Password: o.password, TimeoutMs: '10000' });
  }
  await q({ Action: 'EnableHAForCluster', Partition: 'cluster01' });
  return bmcs;
}
