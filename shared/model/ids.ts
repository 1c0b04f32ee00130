import { randomBytes } from 'node:crypto';

/** EC2-style ids: a prefix and 8 lowercase hex digits (Eucalyptus 3 used 8). */
export const INSTANCE_ID = /^i-[0-9a-f]{8}$/;
export const RESERVATION_ID = /^r-[0-9a-f]{8}$/;

export type IdSource = () => string;

/** Random 8-hex suffixes; tests and the simulator inject a seeded source instead. */
export const randomHex8: IdSource = () => randomBytes(4).toString('hex');

export function newInstanceId(hex: IdSource = randomHex8): string {
  return `i-${hex()}`;
}

export function newReservationId(hex: IdSource = randomHex8): string {
  return `r-${hex()}`;
}
