/**
 * deploy/compose.yaml run for real, in containers from the image scripts/deploy-image.sh builds, on
 * 127.0.79.0/24 with host networking: the cloud PKI made by the image's `ferry init` into the
 * certificates volume, the six services started with podman run in depends_on order (as
 * scripts/deploy-compose.ts does), then DescribeNodes through the CLC shows both NCs ENABLED and an
 * instance runs; the NC's container loads libvirt.so.0 through the libvirt driver's bindings. Every container is stopped and removed by id.
 *
 * Opt-in: it needs root, podman and the built image, so it runs only when FERRY_DEPLOY_IMAGE names
 * the image (scripts/deploy-image.sh --test sets it, and CONTAINERS_CONF for this host's podman).
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import xml2js from 'xml2js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadComposeFile, podmanRunArgs, startOrder } from '../../scripts/composeFile.js';
import { readCredentialsFile } from '../../shared/auth/credentialsFile.js';
import { signQuery } from '../../shared/auth/sign.js';
import { arr, until } from '../helpers/cloudApi.js';
import { ROOT } from '../helpers/cloud.js';

const image = process.env.FERRY_DEPLOY_IMAGE;
const work = process.env.FERRY_DEPLOY_WORK ?? '/var/tmp/ferry-deploy';
const podmanEnv = { ...process.env, CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? join(work, 'containers.conf') };
const podman = async (args: readonly string[]): Promise<string> => (await promisify(execFile)('podman', [...args], { env: podmanEnv })).stdout.trim();

/** The image's ferry user (deploy/Containerfile): the volumes are given to it. */
const FERRY_UID = 990;
const CONTROLLER = '127.0.79.1';
const NODES = ['127.0.79.11', '127.0.79.12'];
const CLC_PORT = 18973;

describe.skipIf(image === undefined)('deploy/compose.yaml in podman (FERRY_DEPLOY_IMAGE)', () => {
  // Made in beforeAll: a skipped describe still runs this body.
  let certs = '';
  let data = '';
  const project = `ferrytest${process.pid}`;
  /** Container id by compose service. */
  const ids = new Map<string, string>();
  const url = `http://${CONTROLLER}:${CLC_PORT}/services/Eucalyptus`;

  async function query(params: Record<string, string>): Promise<any> {
    const creds = await readCredentialsFile(join(data, 'clc', 'admin.credentials'));
    const signed = signQuery({ Version: '2013-02-01', ...params }, { ...creds, url, now: Date.now() });
    const res = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${params.Action} → ${res.status}: ${text}`);
    return (await xml2js.parseStringPromise(text, { explicitArray: false }))[`${params.Action}Response`];
  }

  beforeAll(async () => {
    const base = mkdtempSync('/tmp/ferry-compose-');
    certs = join(base, 'certs');
    data = join(base, 'data');
    for (const d of [certs, data]) {
      mkdirSync(d, { recursive: true });
      chownSync(d, FERRY_UID, FERRY_UID);
    }
    await podman(['run', '--rm', '-v', `${certs}:/etc/ferry/certs`, image ?? '', 'init', '--dir', '/etc/ferry/certs',
      '--clc', CONTROLLER, '--cc', `cluster01=${CONTROLLER}`, '--nc', NODES.join(',')]);
    const env = {
      FERRY_COMPOSE_IMAGE: image, FERRY_COMPOSE_CERTS: certs, FERRY_COMPOSE_DATA: data, FERRY_COMPOSE_CONTROLLER: CONTROLLER,
      FERRY_COMPOSE_NC1: NODES[0], FERRY_COMPOSE_NC2: NODES[1], FERRY_COMPOSE_CLC_PORT: String(CLC_PORT), FERRY_COMPOSE_CC_PORT: '18974',
      FERRY_COMPOSE_NC_PORT: '18975', FERRY_COMPOSE_SIMHV_TLS_PORT: '18914',
    };
    for (const s of startOrder(loadComposeFile(join(ROOT, 'deploy/compose.yaml'), env))) ids.set(s.name, await podman(podmanRunArgs(project, s)));
  }, 180_000);

  afterAll(async () => {
    if (ids.size > 0) {
      await podman(['stop', '-t', '20', ...ids.values()]).catch((e: unknown) => process.stderr.write(`podman stop: ${String(e)}\n`));
      await podman(['rm', '-f', ...ids.values()]).catch((e: unknown) => process.stderr.write(`podman rm: ${String(e)}\n`));
    }
    if (data !== '') rmSync(dirname(data), { recursive: true, force: true });
  }, 120_000);

  it('runs every daemon as the image\'s ferry user, with the certificates from the volume', async () => {
    expect([...ids.keys()].sort()).toEqual(['cc', 'clc', 'nc-1', 'nc-2', 'simhv-1', 'simhv-2']);
    for (const id of ids.values()) expect(await podman(['exec', id, 'id', '-u'])).toBe(String(FERRY_UID));
    expect(existsSync(join(certs, `clc-${CONTROLLER}.pem`))).toBe(true);
  });

  it('gives the NC the libvirt client library: the libvirt driver binds every function it calls from libvirt.so.0', async () => {
    const bind = 'import("/opt/ferry/dist/nc/hypervisor/libvirt/ffi.js").then((m) => console.log(Object.keys(m.libvirt()).length))';
    const bound = Number(await podman(['exec', ids.get('nc-1') ?? '', 'node', '--input-type=module', '-e', bind]));
    expect(bound).toBeGreaterThan(20);
  });

  it('shows both NCs ENABLED through the CLC, and runs an instance on one of them', async () => {
    await until('the admin credentials', async () => existsSync(join(data, 'clc', 'admin.credentials')), (v) => v, 90_000);
    const nodes = await until('DescribeNodes', async () => arr<any>((await query({ Action: 'DescribeNodes' }).catch(() => ({})))?.nodeSet?.item)
      .map((n) => `${n.host} ${n.state}`).sort(), (v) => v.length === 2 && v.every((l) => l.endsWith(' ENABLED')), 120_000);
    expect(nodes).toEqual(NODES.map((h) => `${h} ENABLED`));

    const run = await query({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '1', MaxCount: '1' });
    const id = arr<any>(run.instancesSet.item)[0].instanceId as string;
    const inst = await until('the instance running', async () => {
      const r = await query({ Action: 'DescribeInstances', 'InstanceId.1': id });
      return arr<any>(arr<any>(r.reservationSet?.item)[0]?.instancesSet?.item)[0];
    }, (i) => i?.instanceState?.name === 'running', 120_000);
    expect(NODES).toContain(inst.nodeHost);
  }, 300_000);
});
