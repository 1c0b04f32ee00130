/**
 * The operation travels in the SOAPAction header as well as in the body's root element (as axis2's
 * clients sent it to Eucalyptus's CC and NC), so a server knows what is asked, and whether this
 * caller may ask it, before it reads a byte of the body. The body's root must then be the same.
 */
import { WIRE_NS } from './wireValue.js';

/** Node's lower-cased name of the header. */
export const SOAP_ACTION_HEADER = 'soapaction';

const SOAP_ACTION = /^"urn:ferry:wire:1#([A-Za-z][A-Za-z0-9_.-]{0,127})"$/;

/** The header value a client sends for `operation`: "urn:ferry:wire:1#<operation>", quoted as SOAP 1.1 has it. */
export function soapActionOf(operation: string): string {
  return `"${WIRE_NS}#${operation}"`;
}

/** The operation a SOAPAction header names, or undefined when it names none in Ferry's form. */
export function operationOf(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' ? SOAP_ACTION.exec(header.trim())?.[1] : undefined;
}
