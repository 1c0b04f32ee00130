/** Runs a built euca-* command (dist/clc/cli/NAME.js, or a bin/ wrapper) against a CLC URL, without blocking this process. */
import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Express } from 'express';
import { CLC_PATH } from '../../clc/api/app.js';
import { ROOT } from './buildOnce.js';

export interface CliRun { code: number; stdout: string; stderr: string }

export function runBuiltCli(file: string, args: readonly string[], env: Readonly<Record<string, string>>): Promise<CliRun> {
  const isBin = file.startsWith('bin/');
  const entry = isBin ? join(ROOT, file) : join(ROOT, 'dist', 'clc', 'cli', `${file}.js`);
  const cmd = isBin ? entry : process.execPath;
  const argv = isBin ? [...args] : [entry, ...args];
  return new Promise((resolve) => {
    execFile(cmd, argv, { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

export const lines = (s: string): string[] => s.split('\n').filter((l) => l !== '');

/** Serves `app` on `host` (a free port) for the commands to call; its admin-API URL, and how to stop it. */
export async function serveForCli(app: Express, host: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = await new Promise<Server>((resolve) => { const s = app.listen(0, host, () => resolve(s)); });
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}${CLC_PATH}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
