/**
 * Whether KVM really works here. libvirt advertises kvm whenever /dev/kvm exists, but on a VM
 * without nested virtualization /dev/kvm is there and guests hang (../shared/notes/libvirt-lab.md):
 * so look at the machine itself: the CPU must offer vmx/svm and /dev/kvm must open read-write.
 */
import { constants } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import type { LibvirtDomainType } from './domainXml.js';

export interface KvmEvidence {
  /** The `flags` lines of /proc/cpuinfo. */
  readonly cpuFlags: string;
  readonly devKvmUsable: boolean;
}

export function domainTypeFor(e: KvmEvidence): LibvirtDomainType {
  return e.devKvmUsable && /\b(vmx|svm)\b/.test(e.cpuFlags) ? 'kvm' : 'qemu';
}

export async function probeKvm(): Promise<KvmEvidence> {
  const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
  const cpuFlags = cpuinfo.split('\n').filter((l) => l.startsWith('flags')).join('\n');
  const devKvmUsable = await access('/dev/kvm', constants.R_OK | constants.W_OK).then(() => true, () => false);
  return { cpuFlags, devKvmUsable };
}
