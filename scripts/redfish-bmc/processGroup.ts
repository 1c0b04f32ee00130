/**
 * Whether a lab host is running, read from /proc: a process, or any process of a process group.
 * A zombie counts as dead (orphans are reaped late where pid 1 is not an init). Shared by the ipmi_sim
 * lab's tests and the Redfish lab BMC.
 */
import { readdir, readFile } from 'node:fs/promises';

/** State, ppid and pgrp of a /proc/<pid>/stat line (the command may contain spaces and parentheses). */
function statFields(stat: string): { state: string; pgrp: number } {
  const [state = '', , pgrp = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state, pgrp: Number(pgrp) };
}

/** Whether `pid` is a running process. */
export async function isAlive(pid: number): Promise<boolean> {
  try {
    return statFields(await readFile(`/proc/${pid}/stat`, 'utf8')).state !== 'Z';
  } catch {
    return false;
  }
}

/** Whether any live process is in process group `pgid`. */
export async function groupAlive(pgid: number): Promise<boolean> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { state, pgrp } = statFields(await readFile(`/proc/${entry}/stat`, 'utf8'));
      if (pgrp === pgid && state !== 'Z') return true;
    } catch {
      // Gone meanwhile.
    }
  }
  return false;
}
