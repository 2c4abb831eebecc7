import { randomBytes } from 'node:crypto';
import { isWallId, wallIdFrom } from '../../core/wall/wall-id.js';

/**
 * A parked question's id: typed by hand (`sleds route answer q7k2m9qa45pz A`) and carried in a Slack button's value,
 * so it uses the wall ids' alphabet (no 0/o, 1/l).
 */
export function newQuestionId(): string {
  return wallIdFrom(randomBytes(12));
}

export const isQuestionId = isWallId;
