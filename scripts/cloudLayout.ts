/**
 * Which processes make up a cloud on this machine, with which flags: one description used by the
 * demo (detached daemons) and by the integration tests (children they kill by PID).
 */
import { join } from 'node:path';

export interface ProcessSpec {
  /** Unique within the cloud: clc, cc, nc-127.0.1.1, simhv-127.0.1.1. */
  readonly name: string;
  /** Built entry point, relative to the project root. */
  readonly entry: string;
  readonly args: readonly string[];
  /** What the daemon prints on stdout when it serves. */
  readonly ready: string;
}

export interface CloudLayoutOptions {
  /** Where state, shared storage and logs go. */
  readonly baseDir: string;
  /** Address of the CLC and CC (127.0.0.1 for the demo). */
  readonly controllerHost: string;
  /** NC host addresses, one loopback address per simulated host (127.0.1.N). */
  readonly nodeHosts: readonly string[];
  readonly partition?: string;
  /** Extra simhv flags, e.g. --time-scale for fast tests. */
  readonly simArgs?: readonly string[];
  readonly ccArgs?: readonly string[];
  readonly ncArgs?: readonly string[];
  /**
   * Flags that point each NC at a hypervisor other than the simulated one (e.g. --hypervisor libvirt
   * --libvirt-uri ...); when given, no simhv process runs.
   */
  readonly hypervisorArgs?: (host: string) => readonly string[];
}

export const PORTS = Object.freeze({ clc: 8773, cc: 8774, nc: 8775, simhv: 16509 });

export function cloudLayout(o: CloudLayoutOptions): ProcessSpec[] {
  const partition = o.partition ?? 'cluster01';
  const specs: ProcessSpec[] = [];
  for (const host of o.nodeHosts) {
    if (!o.hypervisorArgs) {
      specs.push({
        name: `simhv-${host}`,
        entry: 'dist/nc/hypervisor/sim/main.js',
        args: ['--host', host, '--port', String(PORTS.simhv), '--state-dir', join(o.baseDir, 'hosts', host, 'simhv'),
          '--storage-dir', join(o.baseDir, 'storage'), ...(o.simArgs ?? [])],
        ready: 'simhv listening on',
      });
    }
    specs.push({
      name: `nc-${host}`,
      entry: 'dist/nc/main.js',
      args: ['--host', host, '--port', String(PORTS.nc), '--state-dir', join(o.baseDir, 'hosts', host, 'nc'),
        ...(o.hypervisorArgs?.(host) ?? ['--sim-url', `http://${host}:${PORTS.simhv}`]),
        '--cc-url', `http://${o.controllerHost}:${PORTS.cc}`, ...(o.ncArgs ?? [])],
      ready: 'nc listening on',
    });
  }
  specs.push({
    name: 'cc',
    entry: 'dist/cc/main.js',
    args: ['--host', o.controllerHost, '--port', String(PORTS.cc), '--partition', partition,
      '--nodes', o.nodeHosts.join(','), '--nc-port', String(PORTS.nc), '--state-dir', join(o.baseDir, 'cc'), ...(o.ccArgs ?? [])],
    ready: 'cc listening on',
  });
  specs.push({
    name: 'clc',
    entry: 'dist/clc/main.js',
    args: ['--host', o.controllerHost, '--port', String(PORTS.clc), '--state-dir', join(o.baseDir, 'clc'),
      '--clusters', `${partition}=http://${o.controllerHost}:${PORTS.cc}`],
    ready: 'clc listening on',
  });
  return specs;
}

export function clcUrl(controllerHost: string): string {
  return `http://${controllerHost}:${PORTS.clc}/services/Eucalyptus`;
}
