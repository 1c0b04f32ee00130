/** The values a wire message carries, and the names it may use (shared by the encoder and the decoder). */
export type WireValue = string | number | boolean | null | WireValue[] | WireObject;
export interface WireObject {
  [key: string]: WireValue;
}

export const WIRE_NS = 'urn:ferry:wire:1';
/** Element names: letters first; no '$'/'_' (xml2js's own keys), no prototype names. */
const NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;

export function isSafeName(name: string): boolean {
  return NAME.test(name) && !(name in Object.prototype);
}
