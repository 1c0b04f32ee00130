/**
 * libvirt's default event loop, run by this process so connections deliver domain lifecycle events
 * (and answer libvirtd's keepalives). It must be registered before the connections that want events
 * are opened. One koffi async call at a time blocks a libuv pool thread in virEventRunDefaultImpl
 * until something happens; the loop re-arms for the life of the process (the NC exits with
 * process.exit, so a pending iteration does not hold it).
 */
import { libvirt } from './ffi.js';

let running = false;

export function startLibvirtEventLoop(): void {
  if (running) return;
  const lv = libvirt();
  if ((lv.virEventRegisterDefaultImpl() as number) < 0) return;
  running = true;
  const iterate = (): void => {
    lv.virEventRunDefaultImpl.async((err: unknown) => {
      // A failing iteration (never seen) must not spin: retry after a pause.
      if (err) setTimeout(iterate, 1_000).unref();
      else iterate();
    });
  };
  iterate();
}

export function libvirtEventLoopRunning(): boolean {
  return running;
}
