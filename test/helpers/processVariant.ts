/** A process of a test cloud's layout started with other flag values (its own port, state dir, store). */
import type { ProcessSpec } from '../../scripts/cloudLayout.js';

/** `spec` renamed `name`, with the flags in `set` given these values (added when absent) and `extra` appended. */
export function variant(spec: ProcessSpec, name: string, set: Record<string, string>, extra: readonly string[] = []): ProcessSpec {
  const args = [...spec.args];
  for (const [flag, value] of Object.entries(set)) {
    const i = args.indexOf(flag);
    if (i < 0) args.push(flag, value);
    else args[i + 1] = value;
  }
  return { ...spec, name, args: [...args, ...extra] };
}
