import { randomBytes, timingSafeEqual } from 'node:crypto';

/** 256 random bits, URL-safe: unguessable, and printable in the URL the user opens. */
export function createAccessToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares in constant time, so the response time does not leak how much of a guess was right. */
export function tokensMatch(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
