/**
 * One error registry per API surface (STYLE habit 6): each entry has a stable code, a message
 * template with {placeholders}, an HTTP status, whether the client is at fault and whether a retry
 * can help. Errors reach the wire through one handler per surface.
 */
export interface ErrorSpec {
  readonly status: number;
  readonly message: string;
  readonly clientFault: boolean;
  readonly retryable: boolean;
}

export type ErrorTable = Readonly<Record<string, ErrorSpec>>;

export type ErrorFields = Readonly<Record<string, string | number | boolean | undefined>>;

/** An error that carries a registry code; the only kind of error that may reach a client. */
export class FerryError extends Error {
  readonly code: string;
  readonly status: number;
  readonly clientFault: boolean;
  readonly retryable: boolean;
  readonly fields: ErrorFields;

  constructor(code: string, spec: ErrorSpec, fields: ErrorFields = {}, message?: string) {
    super(message ?? renderTemplate(spec.message, fields));
    this.name = 'FerryError';
    this.code = code;
    this.status = spec.status;
    this.clientFault = spec.clientFault;
    this.retryable = spec.retryable;
    this.fields = fields;
  }
}

export function renderTemplate(template: string, fields: ErrorFields): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => {
    const v = fields[key];
    return v === undefined ? whole : String(v);
  });
}

export interface ErrorRegistry<T extends ErrorTable> {
  readonly table: T;
  /** Builds a coded error; the message is the template filled with `fields`. */
  make(code: keyof T & string, fields?: ErrorFields): FerryError;
  /** Builds a coded error with a message written by the caller (e.g. a peer's message). */
  withMessage(code: keyof T & string, message: string, fields?: ErrorFields): FerryError;
  has(code: string): code is keyof T & string;
}

export function defineErrors<T extends ErrorTable>(table: T): ErrorRegistry<T> {
  const frozen = Object.freeze({ ...table });
  return {
    table: frozen,
    make(code, fields = {}) {
      return new FerryError(code, frozen[code] as ErrorSpec, fields);
    },
    withMessage(code, message, fields = {}) {
      return new FerryError(code, frozen[code] as ErrorSpec, fields, message);
    },
    has(code: string): code is keyof T & string {
      return Object.prototype.hasOwnProperty.call(frozen, code);
    },
  };
}

/** Shorthands for table entries. */
export const client = (status: number, message: string): ErrorSpec => ({ status, message, clientFault: true, retryable: false });
export const server = (status: number, message: string, retryable = true): ErrorSpec => ({ status, message, clientFault: false, retryable });
/** The request conflicts with the current state (409, the client's to resolve); `retryable` when that state passes by itself. */
export const conflict = (message: string, retryable: boolean): ErrorSpec => ({ status: 409, message, clientFault: true, retryable });

export function isFerryError(e: unknown): e is FerryError {
  return e instanceof FerryError;
}
