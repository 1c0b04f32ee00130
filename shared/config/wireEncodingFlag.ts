/**
 * --wire-encoding, which every tier that calls another takes (CLC → CC, CC → NC, NC → CC): what its
 * requests are sent in. json (the default) is Ferry's compact encoding; xml keeps the typed XML, for
 * a cloud that must not send JSON at all. Either way a peer that does not read JSON is called in XML
 * (shared/wire/httpTransport.ts), and every server reads both.
 */
import { z } from 'zod';
import { WIRE_ENCODINGS } from '../wire/wireEncoding.js';

export const wireEncodingFlag = z.enum(WIRE_ENCODINGS, { error: `must be one of: ${WIRE_ENCODINGS.join(', ')}` }).default('json');

/** The flag with its argument and its help, alike in every daemon; the env var is the daemon's. */
export const WIRE_ENCODING_FLAG = '--wire-encoding <json|xml>';
export const WIRE_ENCODING_HELP = 'what requests to the other tiers are sent in: json (compact, the default) or xml (typed XML, as before); a peer that reads only XML is called in XML either way';
