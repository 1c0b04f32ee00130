/**
 * The status page's login check: the access key id and secret key against the CLC's admin
 * credentials. Both comparisons always run and compare SHA-256 digests with timingSafeEqual, so
 * the answer's timing says nothing about which part, or how much of it, was right.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Credentials } from '../../shared/auth/credentialsFile.js';

/** True when (accessKeyId, secretKey) are the administrator's. */
export type LoginCheck = (accessKeyId: string, secretKey: string) => boolean;

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

export function adminLoginCheck(admin: Pick<Credentials, 'accessKey' | 'secretKey'>): LoginCheck {
  const key = digest(admin.accessKey);
  const secret = digest(admin.secretKey);
  return (accessKeyId, secretKey) => {
    const keyOk = timingSafeEqual(digest(accessKeyId), key);
    const secretOk = timingSafeEqual(digest(secretKey), secret);
    return keyOk && secretOk;
  };
}
