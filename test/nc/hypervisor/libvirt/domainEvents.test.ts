import { describe, expect, it } from 'vitest';
import { lifecycleMeaning } from '../../../../nc/hypervisor/libvirt/domainEvents.js';
import { VIR } from '../../../../nc/hypervisor/libvirt/ffi.js';

const E = VIR.EVENT;
const S = VIR.EVENT_STOPPED;

describe('lifecycleMeaning', () => {
  it.each([
    ['booted', E.STARTED, 0, { kind: 'event', event: { kind: 'started', id: 'i-1' } }],
    ['an incoming migration starting (paused)', E.STARTED, VIR.EVENT_STARTED.MIGRATED, { kind: 'ignore' }],
    ['an incoming migration resuming', E.RESUMED, VIR.EVENT_RESUMED.MIGRATED, { kind: 'arrived', id: 'i-1' }],
    ['an unpause', E.RESUMED, 0, { kind: 'ignore' }],
    // A paused guest's incoming migration ends suspended; an ordinary pause is looked at and changes nothing.
    ['a suspend', E.SUSPENDED, 0, { kind: 'arrived', id: 'i-1' }],
    ['a guest shutdown', E.STOPPED, S.SHUTDOWN, { kind: 'event', event: { kind: 'stopped', id: 'i-1', reason: 'destroyed' } }],
    ['a destroy', E.STOPPED, S.DESTROYED, { kind: 'event', event: { kind: 'stopped', id: 'i-1', reason: 'destroyed' } }],
    ['a migration away', E.STOPPED, S.MIGRATED, { kind: 'event', event: { kind: 'stopped', id: 'i-1', reason: 'migrated' } }],
    ['a crash', E.STOPPED, S.CRASHED, { kind: 'event', event: { kind: 'stopped', id: 'i-1', reason: 'crashed' } }],
    ['an emulator failure', E.STOPPED, S.FAILED, { kind: 'event', event: { kind: 'stopped', id: 'i-1', reason: 'crashed' } }],
    ['a crash event', E.CRASHED, 0, { kind: 'event', event: { kind: 'stopped', id: 'i-1', reason: 'crashed' } }],
    ['a definition', 0, 0, { kind: 'ignore' }],
  ])('%s', (_what, event, detail, want) => {
    expect(lifecycleMeaning('i-1', event, detail)).toEqual(want);
  });
});
