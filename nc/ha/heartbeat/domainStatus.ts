/**
 * What libvirt itself records about a running domain, read without libvirtd: for every domain it
 * runs, libvirt's QEMU driver keeps `<run dir>/qemu/<name>.xml`, a `<domstatus pid=…>` wrapping the
 * live domain XML (removed when the domain stops). The host heartbeat (heartbeatAgent.ts) reads
 * these files so that it needs neither the NC nor a working libvirtd to see which QEMUs run here.
 * Pure: the XML text in, the few facts out.
 */
import sax from 'sax';

export interface DomainStatus {
  readonly name: string;
  /** The QEMU process's pid, as libvirt recorded it. */
  readonly pid: number;
  /** Source files of the domain's file-backed disks, in device order. */
  readonly disks: readonly string[];
}

/** Parses one status file; undefined when it is not a complete `<domstatus>` of a named domain with a pid. */
export function parseDomainStatus(xml: string): DomainStatus | undefined {
  const parser = sax.parser(true, { trim: true });
  const path: string[] = [];
  let pid: number | undefined;
  let name = '';
  let inDisk = false;
  const disks: string[] = [];
  let broken = false;
  parser.onerror = () => {
    broken = true; // sax then throws from write(): caught below
  };
  parser.onopentag = (tag) => {
    path.push(tag.name);
    const attr = (k: string): string | undefined => {
      const v = tag.attributes[k];
      return typeof v === 'string' ? v : undefined;
    };
    if (path.length === 1 && tag.name === 'domstatus') {
      const p = Number(attr('pid'));
      if (Number.isSafeInteger(p) && p > 1) pid = p;
    }
    const under = path.slice(0, -1).join('/');
    if (tag.name === 'disk' && under === 'domstatus/domain/devices') inDisk = attr('type') === 'file';
    if (tag.name === 'source' && inDisk && under === 'domstatus/domain/devices/disk') {
      const file = attr('file');
      if (file !== undefined && file.length > 0) disks.push(file);
    }
  };
  parser.onclosetag = (tagName) => {
    if (tagName === 'disk') inDisk = false;
    path.pop();
  };
  parser.ontext = (text) => {
    if (path.join('/') === 'domstatus/domain/name') name += text;
  };
  try {
    parser.write(xml).close();
  } catch {
    return undefined;
  }
  if (broken || pid === undefined || name.length === 0) return undefined;
  return { name, pid, disks };
}
