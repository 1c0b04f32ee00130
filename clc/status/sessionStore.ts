/**
 * The status page's sessions: a random 256-bit id per login, kept in memory with a server-side
 * expiry (a CLC restart logs everybody out, which is fine for a read-only page). Bounded: past
 * `maxSessions` the oldest session ends, so a stream of logins cannot grow the table. Time comes
 * from the injected clock; ids from an injected source (crypto's by default).
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';

/** How long a session lasts after login: one working day. */
export const SESSION_TTL_MS = 12 * 60 * 60_000;
export const MAX_SESSIONS = 256;

export interface Session {
  readonly id: string;
  /** Who logged in: the access key id (never the secret). */
  readonly accessKeyId: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

export interface SessionStoreOptions {
  readonly clock: Clock;
  readonly ttlMs?: number;
  readonly maxSessions?: number;
  /** 32 random bytes as base64url by default. */
  readonly newId?: () => string;
}

const randomId = (): string => randomBytes(32).toString('base64url');

export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly ttlMs: number;
  private readonly maxSessions: number;
  private readonly newId: () => string;

  constructor(private readonly opts: SessionStoreOptions) {
    this.ttlMs = opts.ttlMs ?? SESSION_TTL_MS;
    this.maxSessions = opts.maxSessions ?? MAX_SESSIONS;
    this.newId = opts.newId ?? randomId;
  }

  create(accessKeyId: string): Session {
    const now = this.opts.clock.now();
    this.sweep(now);
    // Map order is insertion order: the first key is the oldest session.
    while (this.sessions.size >= this.maxSessions) {
      const oldest = this.sessions.keys().next();
      if (oldest.done === true) break;
      this.sessions.delete(oldest.value);
    }
    const session: Session = Object.freeze({ id: this.newId(), accessKeyId, createdAt: now, expiresAt: now + this.ttlMs });
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id; an expired one is removed and answers undefined. */
  find(id: string | undefined): Session | undefined {
    if (id === undefined || id === '') return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (this.opts.clock.now() >= s.expiresAt) {
      this.sessions.delete(id);
      return undefined;
    }
    return s;
  }

  /** Logout: true when the session existed. */
  end(id: string | undefined): boolean {
    return id !== undefined && this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }

  private sweep(now: number): void {
    for (const [id, s] of this.sessions) if (now >= s.expiresAt) this.sessions.delete(id);
  }
}
