/**
 * Wall ids are read aloud and typed by hand (`/sled pickup jd7k2m9qa41p`), so the alphabet leaves out the
 * characters people confuse: 0/o and 1/l. 32 symbols × 12 characters = 60 bits, unique in practice; the store's
 * primary key catches the rest and the caller draws again.
 */
export const WALL_ID_ALPHABET = '23456789abcdefghijkmnpqrstuvwxyz';
export const WALL_ID_LENGTH = 12;

/** An id from random bytes (passed in: core reads no randomness). Needs at least WALL_ID_LENGTH bytes. */
export function wallIdFrom(bytes: Uint8Array): string {
  if (bytes.length < WALL_ID_LENGTH) throw new Error(`wallIdFrom needs ${WALL_ID_LENGTH} random bytes, got ${bytes.length}`);
  let id = '';
  for (let i = 0; i < WALL_ID_LENGTH; i++) id += WALL_ID_ALPHABET[bytes[i]! & 31];
  return id;
}

export function isWallId(text: string): boolean {
  return text.length === WALL_ID_LENGTH && [...text].every((c) => WALL_ID_ALPHABET.includes(c));
}
