/**
 * The volume commands (issue 18), euca2ools' names and lines:
 *   euca-create-volume -s SIZE -z ZONE [--client-token T]   VOLUME id size snapshot zone status create-time
 *   euca-delete-volume VOLUME                               VOLUME id
 *   euca-describe-volumes [VOLUME...] [--filter N=V]        VOLUME ... and ATTACHMENT ... beneath it
 *   euca-attach-volume -i INSTANCE -d DEVICE VOLUME         ATTACHMENT volume instance device status attach-time
 *   euca-detach-volume [-i INSTANCE] [-d DEVICE] [-f] VOLUME
 * Each bin/ script runs one of these.
 */
import { collectFilter, filterParams, listParams } from './args.js';
import type { CliCommand } from './command.js';
import { attachmentLine, volumeLine, volumeLines } from './format.js';
import { readResponse } from './responses.js';

export const createVolumeCommand: CliCommand = {
  name: 'euca-create-volume',
  description: 'Create a volume (a file on the cloud\'s shared storage)',
  configure: (cmd) => cmd
    .requiredOption('-s, --size <GiB>', 'size in GiB')
    .requiredOption('-z, --zone <zone>', 'availability zone (partition) it lives in')
    .option('--client-token <token>', 'makes the request idempotent: again with the same token, it creates nothing and shows the first volume'),
  async run({ client, url, opts }) {
    const params: Record<string, string> = { Size: String(opts.size), AvailabilityZone: String(opts.zone) };
    if (typeof opts.clientToken === 'string') params.ClientToken = opts.clientToken;
    const r = readResponse('CreateVolume', await client.call('CreateVolume', params), url);
    return { json: r, lines: [volumeLine(r)] };
  },
};

export const deleteVolumeCommand: CliCommand = {
  name: 'euca-delete-volume',
  description: 'Delete a volume that is not attached',
  configure: (cmd) => cmd.argument('<volume>', 'volume id (vol-XXXXXXXX)'),
  async run({ client, url, args }) {
    const volumeId = String(args[0]);
    const r = readResponse('DeleteVolume', await client.call('DeleteVolume', { VolumeId: volumeId }), url);
    return { json: r, lines: [`VOLUME\t${volumeId}`] };
  },
};

export const describeVolumesCommand: CliCommand = {
  name: 'euca-describe-volumes',
  description: 'Show volumes and their attachments',
  configure: (cmd) => cmd
    .argument('[volumes...]', 'volume ids (all when none)')
    .option('-F, --filter <name=value>', 'EC2 filter (status, attachment.instance-id, availability-zone, tag:KEY, ...); repeatable', collectFilter),
  async run({ client, url, args, opts }) {
    const ids = (args[0] as string[] | undefined) ?? [];
    const filters = (opts.filter as Map<string, string[]> | undefined) ?? new Map<string, string[]>();
    const r = readResponse('DescribeVolumes', await client.call('DescribeVolumes', { ...listParams('VolumeId', ids), ...filterParams(filters) }), url);
    return { json: r, lines: volumeLines(r) };
  },
};

export const attachVolumeCommand: CliCommand = {
  name: 'euca-attach-volume',
  description: 'Attach a volume to a running instance (answered once its node attached it)',
  configure: (cmd) => cmd
    .argument('<volume>', 'volume id')
    .requiredOption('-i, --instance <id>', 'instance to attach it to')
    .requiredOption('-d, --device <device>', 'device name in the guest (/dev/vdb, /dev/sdf, ...)'),
  async run({ client, url, args, opts }) {
    const params = { VolumeId: String(args[0]), InstanceId: String(opts.instance), Device: String(opts.device) };
    const r = readResponse('AttachVolume', await client.call('AttachVolume', params), url);
    return { json: r, lines: [attachmentLine(r)] };
  },
};

export const detachVolumeCommand: CliCommand = {
  name: 'euca-detach-volume',
  description: 'Detach a volume (Force also from a stopped instance, or one whose attach never answered)',
  configure: (cmd) => cmd
    .argument('<volume>', 'volume id')
    .option('-i, --instance <id>', 'only if attached to this instance')
    .option('-d, --device <device>', 'only if attached as this device')
    .option('-f, --force', 'force the detach'),
  async run({ client, url, args, opts }) {
    const params: Record<string, string> = { VolumeId: String(args[0]) };
    if (typeof opts.instance === 'string') params.InstanceId = opts.instance;
    if (typeof opts.device === 'string') params.Device = opts.device;
    if (opts.force === true) params.Force = 'true';
    const r = readResponse('DetachVolume', await client.call('DetachVolume', params), url);
    return { json: r, lines: [attachmentLine(r)] };
  },
};
