/** euca-run-instances <emi> [-n MIN[-MAX]] [-t TYPE] [-z ZONE] [--client-token TOKEN] */
import { parseCount } from './args.js';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { reservationLines } from './format.js';
import { readResponse } from './responses.js';

const runInstancesCommand: CliCommand = {
  name: 'euca-run-instances',
  description: 'Start instances of an image',
  configure: (cmd) => cmd
    .argument('<image>', 'image id (emi-XXXXXXXX)')
    .option('-n, --instance-count <MIN[-MAX]>', 'how many to start (1); MIN:MAX also works', parseCount)
    .option('-t, --instance-type <type>', 'VM type (m1.small)')
    .option('-z, --availability-zone <zone>', 'partition to start them in (chosen by free capacity if omitted)')
    .option('--client-token <token>', 'makes the request idempotent: run again with the same token, it launches nothing and shows the first reservation'),
  async run({ client, url, args, opts }) {
    const params: Record<string, string> = { ImageId: String(args[0]) };
    const count = opts.instanceCount as { min: string; max: string } | undefined;
    if (count) {
      params.MinCount = count.min;
      params.MaxCount = count.max;
    }
    if (typeof opts.instanceType === 'string') params.InstanceType = opts.instanceType;
    if (typeof opts.availabilityZone === 'string') params['Placement.AvailabilityZone'] = opts.availabilityZone;
    if (typeof opts.clientToken === 'string') params.ClientToken = opts.clientToken;
    const r = readResponse('RunInstances', await client.call('RunInstances', params), url);
    return { json: r, lines: reservationLines(r) };
  },
};

await runCli(runInstancesCommand);
