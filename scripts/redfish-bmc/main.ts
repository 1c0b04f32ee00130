/**
 * redfish-bmc: the fencing lab's Redfish BMC (docs/OPERATIONS.md "Redfish lab"), one process per
 * simulated host, on a loopback address:
 *   FENCING_LAB_PASSWORD=pw node dist/scripts/redfish-bmc/main.js --address 127.0.35.1 --port 16350 \
 *     --user admin [--fault none|wrong-credentials|stuck|hang|closed] [--cert-out FILE] -- HOST_COMMAND...
 * The host command starts powered on, in its own session. Prints one JSON line when ready. Control
 * lines on stdin, each answered by one JSON line: `fault MODE`, `state`. SIGTERM/SIGINT power the
 * host off and exit. Exit codes: 0 stopped, 2 bad arguments, 1 anything else.
 */
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Command, CommanderError } from 'commander';
import { LabHost } from './labHost.js';
import { BMC_FAULTS, isBmcFault, type BmcFault } from './redfishModel.js';
import { RedfishBmc } from './redfishServer.js';
import { selfSignedBmcIdentity } from './redfishTls.js';

interface MainOptions {
  address: string;
  port: string;
  user: string;
  fault: string;
  certOut?: string;
}

const out = (o: unknown): void => void process.stdout.write(`${JSON.stringify(o)}\n`);

/** Ferry's labs stay on loopback (docs/OPERATIONS.md "Fencing lab"). */
const LOOPBACK = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

function parse(argv: readonly string[]): { o: MainOptions; command: string[]; password: string } | string {
  const cmd = new Command('redfish-bmc')
    .description('a Redfish BMC for the fencing lab whose power is a process group')
    .requiredOption('--address <ip>', 'loopback address to listen on (127.x.y.z)')
    .requiredOption('--port <n>', 'TCP port')
    .requiredOption('--user <name>', 'the BMC user (the password comes from FENCING_LAB_PASSWORD)')
    .option('--fault <mode>', `initial fault: ${BMC_FAULTS.join(', ')}`, 'none')
    .option('--cert-out <file>', 'write the self-signed certificate (PEM) here, for clients that verify it')
    .argument('[host-command...]', 'the host: started powered on, killed by power off')
    .exitOverride();
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return e.message;
    throw e;
  }
  const o = cmd.opts<MainOptions>();
  const password = process.env.FENCING_LAB_PASSWORD ?? '';
  if (!LOOPBACK.test(o.address)) return `${o.address} is not a loopback address`;
  if (!/^\d{1,5}$/.test(o.port) || Number(o.port) < 1 || Number(o.port) > 65535) return `bad port ${o.port}`;
  if (!isBmcFault(o.fault)) return `--fault must be one of ${BMC_FAULTS.join(', ')}`;
  if (password.length === 0) return 'set FENCING_LAB_PASSWORD';
  return { o, command: cmd.args, password };
}

async function control(bmc: RedfishBmc, host: LabHost, line: string): Promise<void> {
  const [verb, arg] = line.trim().split(/\s+/);
  if (verb === 'fault' && arg !== undefined && isBmcFault(arg)) {
    await bmc.setFault(arg);
  } else if (verb !== 'state') {
    out({ event: 'error', message: `unknown control line (expected "state" or "fault ${BMC_FAULTS.join('|')}")` });
    return;
  }
  out({ event: 'state', power: await host.power(), hostPgid: host.hostPgid, fault: bmc.fault });
}

async function main(): Promise<number> {
  const p = parse(process.argv.slice(2));
  if (typeof p === 'string') {
    process.stderr.write(`redfish-bmc: ${p}\n`);
    return 2;
  }
  const tls = selfSignedBmcIdentity(p.o.address, new Date());
  if (p.o.certOut !== undefined) writeFileSync(p.o.certOut, tls.certPem, { mode: 0o644 });
  const host = new LabHost(p.command);
  const bmc = new RedfishBmc({
    address: p.o.address, port: Number(p.o.port), user: p.o.user, password: p.password, host, tls, fault: p.o.fault as BmcFault,
  });
  await host.apply('on');
  await bmc.start();
  let commands = Promise.resolve();
  // stdin closing (a shell's </dev/null) does not stop the BMC; only a signal does.
  createInterface({ input: process.stdin }).on('line', (line) => {
    commands = commands.then(() => control(bmc, host, line));
  });
  const stop = async (): Promise<void> => {
    await host.apply('off');
    await bmc.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  out({ event: 'ready', url: bmc.url, pid: process.pid, hostPgid: host.hostPgid, fault: bmc.fault });
  return -1;
}

main().then((code) => {
  if (code >= 0) process.exit(code);
}, (e: unknown) => {
  process.stderr.write(`redfish-bmc: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
