/**
 * ferry-init: creates the cloud PKI (a cloud CA plus one certificate and key per CLC, CC and NC).
 *   node dist/scripts/ferry-init.js --dir certs --clc 127.0.0.1 --cc cluster01=127.0.0.1 --nc 127.0.1.1,127.0.1.2
 * Existing files are kept and reported; --force replaces them (the old ones are moved aside).
 * Exit codes: 0 done, 2 bad request or a file in the way, 1 anything else.
 */
import { Command, CommanderError } from 'commander';
import { isFerryError } from '../shared/errors/registry.js';
import { initCloudPki, RANDOM_PKI_SOURCES } from '../shared/pki/pkiFiles.js';
import { buildCloudPkiSpec } from '../shared/pki/spec.js';

const collect = (v: string, prev: string[]): string[] => [...prev, v];

function main(argv: readonly string[]): number {
  const cmd = new Command('ferry-init')
    .description('create the Ferry cloud CA and a certificate per component')
    .option('--dir <dir>', 'output directory', 'certs')
    .option('--cloud-id <id>', 'names the cloud in every subject (O=Ferry cloud <id>)', 'ferry')
    .option('--clc <host>', 'the CLC host')
    .option('--cc <partition=host>', 'a CC (repeatable)', collect, [])
    .option('--nc <hosts>', 'comma-separated NC hosts (repeatable)', collect, [])
    .option('--force', 'replace existing component files (old ones are moved aside)', false)
    .option('--rotate-ca', 'with --force: replace the CA too (re-issue every component)', false)
    .allowExcessArguments(false)
    .exitOverride();
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    throw e;
  }
  const o = cmd.opts<{ dir: string; cloudId: string; clc?: string; cc: string[]; nc: string[]; force: boolean; rotateCa: boolean }>();
  try {
    const spec = buildCloudPkiSpec({ cloudId: o.cloudId, ...(o.clc !== undefined ? { clc: o.clc } : {}), cc: o.cc, nc: o.nc });
    const report = initCloudPki({
      dir: o.dir, spec, force: o.force, rotateCa: o.rotateCa, now: new Date(), ...RANDOM_PKI_SOURCES,
    });
    for (const f of report.movedAside) process.stdout.write(`moved aside ${f}\n`);
    for (const f of report.written) process.stdout.write(`wrote ${o.dir}/${f}\n`);
    for (const f of report.kept) process.stdout.write(`kept  ${o.dir}/${f} (exists; --force to replace)\n`);
    return 0;
  } catch (e) {
    if (isFerryError(e)) {
      process.stderr.write(`ferry-init: ${e.code}: ${e.message}\n`);
      return e.clientFault ? 2 : 1;
    }
    throw e;
  }
}

process.exitCode = main(process.argv.slice(2));
