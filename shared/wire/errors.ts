import { defineErrors, client, server } from '../errors/registry.js';

/** Errors of the tier-to-tier transport (typed XML or compact JSON), shared by every internal surface (CLC→CC, CC→NC). */
export const WireErrors = defineErrors({
  MalformedXml: client(400, 'request body is not well-formed Ferry wire XML: {detail}'),
  /** The document crossed one of its decoder's bounds (elements, attributes, text), refused where it crossed it. */
  XmlLimitExceeded: client(413, 'document exceeds its limit of {limit} {what}'),
  MalformedJson: client(400, 'request body is not well-formed Ferry wire JSON: {detail}'),
  /** The JSON document crossed one of its decoder's bounds (values, nesting, one string's characters), refused where it crossed it. */
  JsonLimitExceeded: client(413, 'document exceeds its limit of {limit} {what}'),
  /** The operation is named before the body (SOAPAction), so that who may call it is known before reading. */
  OperationHeaderMissing: client(400, 'the SOAPAction header must name the operation as "urn:ferry:wire:1#<operation>" (got {got})'),
  OperationMismatch: client(400, 'the SOAPAction header names {header} but the body is <{operation}>'),
  UnknownOperation: client(400, 'operation {operation} is not served here'),
  InvalidParameter: client(400, 'parameter {field} is invalid: {detail}'),
  RequestTooLarge: client(413, 'request body exceeds {limit} bytes'),
  UnsupportedMediaType: client(415, 'request body must be Ferry wire XML (text/xml or application/xml) or JSON (application/x-ferry+json), in UTF-8'),
  /** mTLS: the caller's certificate names a role (OU) that may not call this operation. */
  PeerNotAuthorized: client(403, 'a {role} certificate may not call {operation}'),
  /** mTLS: a message that speaks for a host must come from that host's certificate (CN and IP subjectAltName). */
  PeerHostMismatch: client(403, 'a {role} certificate for {peerHost} may not speak for host {host} in {operation}'),
  PeerUnreachable: server(503, '{peer} is unreachable: {detail}'),
  PeerTimeout: server(504, '{peer} did not answer {operation} within {timeoutMs} ms'),
  PeerProtocolError: server(502, '{peer} answered {operation} with something that is not a Ferry wire message: {detail}'),
  /** A peer answered with one of its own coded errors; fields carry remoteCode/remoteMessage/remoteStatus. */
  RemoteFault: server(502, '{peer} refused {operation}: {remoteCode}: {remoteMessage}', false),
  InternalError: server(500, 'internal error: {detail}'),
});
