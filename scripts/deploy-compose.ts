/**
 * Runs deploy/compose.yaml with plain `podman run` (Debian's podman-compose 1.0.3 cannot start
 * host-network containers; scripts/composeFile.ts says why):
 *   node dist/scripts/deploy-compose.js up   [-f deploy/compose.yaml] [-p ferry]   start in depends_on order; prints each container id
 *   node dist/scripts/deploy-compose.js down [-p ferry]                            stop and remove the project's containers, by id
 * `${FERRY_COMPOSE_*}` variables come from this process's environment.
 */
import { execFileSync } from 'node:child_process';
import { Command } from 'commander';
import { loadComposeFile, podmanRunArgs, PROJECT_LABEL, startOrder } from './composeFile.js';

const podman = (args: readonly string[]): string => execFileSync('podman', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();

/** The ids of a project's containers, running or not. */
export function projectContainers(project: string): string[] {
  return podman(['ps', '-a', '-q', '--filter', `label=${PROJECT_LABEL}=${project}`]).split('\n').filter((l) => l !== '');
}

function up(file: string, project: string): void {
  if (projectContainers(project).length > 0) {
    process.stderr.write(`project ${project} has containers already: run down first\n`);
    process.exit(1);
  }
  for (const s of startOrder(loadComposeFile(file, process.env))) {
    const id = podman(podmanRunArgs(project, s));
    process.stdout.write(`${s.name} ${id}\n`);
  }
}

function down(project: string): void {
  const ids = projectContainers(project);
  if (ids.length === 0) return;
  podman(['stop', '-t', '20', ...ids]);
  podman(['rm', ...ids]);
  process.stdout.write(`removed ${ids.length} containers of ${project}\n`);
}

const program = new Command('deploy-compose').description('Run deploy/compose.yaml with podman run (host networking)');
program.command('up').option('-f, --file <file>', 'compose file', 'deploy/compose.yaml').option('-p, --project <name>', 'project name', 'ferry')
  .action((o: { file: string; project: string }) => up(o.file, o.project));
program.command('down').option('-p, --project <name>', 'project name', 'ferry').action((o: { project: string }) => down(o.project));
program.parse();
