/**
 * EC2-shaped XML answers out of plain values (clc/api/xmlWriter.ts writes them): lists become
 * `<item>` elements as EC2 writes them, absent values are left out, and text is scrubbed of
 * characters XML 1.0 cannot carry (an echoed client value must not turn an error reply into a crash).
 */
import type { FerryError } from '../../shared/errors/registry.js';
import { xmlDocument, type XmlObject } from './xmlWriter.js';

export type { XmlObject, XmlValue } from './xmlWriter.js';

export const EC2_NAMESPACE = 'http://ec2.amazonaws.com/doc/2013-02-01/';
/** Eucalyptus-only actions (services, nodes) answer in Eucalyptus's message namespace. */
export const EUCA_NAMESPACE = 'http://msgs.eucalyptus.com/';

/** `<{Action}Response xmlns=...><requestId>...</requestId>...body...</{Action}Response>` */
export function renderResponse(action: string, namespace: string, requestId: string, body: XmlObject): string {
  return xmlDocument(`${action}Response`, namespace, { requestId, ...body });
}

/** EC2's error document; the HTTP status travels beside it. */
export function renderError(err: FerryError, requestId: string): string {
  return xmlDocument('Response', undefined, {
    Errors: { Error: { Code: err.code, Message: err.message } },
    RequestID: requestId,
  });
}
