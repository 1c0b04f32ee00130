/**
 * Headers for tests that POST raw wire XML: the media type and the SOAPAction a Ferry client sends,
 * naming the body's root element (or `operation`, for bodies that have none to name).
 */
import { soapActionOf } from '../../shared/wire/soapAction.js';

export function wireHeaders(body: string | Buffer, type = 'text/xml', operation?: string): Record<string, string> {
  const root = /<([A-Za-z][A-Za-z0-9_.-]*)/.exec(typeof body === 'string' ? body : body.subarray(0, 512).toString('utf8'))?.[1];
  return { 'content-type': type, soapaction: soapActionOf(operation ?? root ?? 'none') };
}
