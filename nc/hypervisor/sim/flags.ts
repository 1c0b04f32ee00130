/**
 * simhv's command line: one commander option per CONFIG_FIELDS entry, each falling back to its
 * SIMHV_* variable. Apart from main so that deploy files' command lines can be checked against the
 * real parser (test/deploy/deployFiles.test.ts). Throws CommanderError for a bad or unknown flag or an unknown
 * SIMHV_* variable (after writing why), and for --help after writing it.
 */
import { Command, CommanderError, Option } from 'commander';
import { unknownSettings } from '../../../shared/config/unknownSettings.js';
import { CONFIG_FIELDS, type ConfigField, type ConfigKey, type RawSimHvConfig } from './config.js';

/** Raw settings from argv (without node and script) and env, for compileSimHvConfig. */
export function parseSimHvFlags(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, writeErr: (s: string) => void = () => {}): RawSimHvConfig {
  const program = new Command('simhv')
    .description('Simulated hypervisor daemon for Ferry (one per simulated host)')
    .exitOverride()
    .configureOutput({ writeErr });
  for (const [key, f] of Object.entries(CONFIG_FIELDS) as [ConfigKey, ConfigField][]) {
    const dflt = f.default !== undefined ? ` (default ${f.default})` : '';
    // Variables are read below, from `env`: commander would read process.env, and take SIMHV_INSECURE_PLAINTEXT=0 for true.
    const opt = f.boolean ? new Option(f.flag, `${f.help} [env: ${f.env}]`) : new Option(`${f.flag} <value>`, `${f.help}${dflt} [env: ${f.env}]`);
    // attributeName keeps our field names (commander would turn --memory-mib into memoryMib).
    opt.attributeName = () => key;
    program.addOption(opt);
  }
  program.parse([...argv], { from: 'user' });
  const unknown = unknownSettings(env, 'SIMHV_', Object.values(CONFIG_FIELDS).map((f) => f.env));
  if (unknown.length > 0) {
    const message = `simhv: invalid configuration\n  ${unknown.join('\n  ')}\n`;
    writeErr(message);
    throw new CommanderError(2, 'simhv.unknownSetting', message);
  }
  const opts = program.opts<Record<string, string | boolean | undefined>>();
  const raw: RawSimHvConfig = {};
  for (const [key, f] of Object.entries(CONFIG_FIELDS) as [ConfigKey, ConfigField][]) {
    raw[key] = f.boolean ? (opts[key] === true ? true : env[f.env]) : (opts[key] ?? env[f.env]);
  }
  return raw;
}
