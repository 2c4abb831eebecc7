/** Every token count of a usage record (or a metered response) at zero: a test's row spreads it, then sets what it is about. */
export { ZERO_TOKEN_COUNTS } from '../../core/usage.js';
