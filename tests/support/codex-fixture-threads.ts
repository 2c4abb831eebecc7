/**
 * The threads of the made-up Codex rollouts in tests/fixtures/codex/sessions (its README says what each shows), and
 * the reset of their 5-hour window.
 */
// Codex 0.169 (paginated history, ordinals: a fork copies nothing)
export const P = '019ad0f1-5f7f-7c3e-9a1b-4c5d6e7f8091';
export const C = '019ad105-0b2a-7d41-8e6f-1a2b3c4d5e6f';
export const G = '019ad10e-77c4-7a90-b3d2-9f8e7d6c5b4a';
export const L = '019ad128-3e1f-7b62-a4c5-0d9e8f7a6b5c';
// older Codex (legacy history: a fork copies its parent, re-stamped)
export const LP = '019acb9c-1d2e-7f30-8a41-b2c3d4e5f601';
export const LC = '019acbb9-2e3f-7041-9b52-c3d4e5f6a702';
export const LS = '019acbc7-3f40-7152-ac63-d4e5f6a7b803';

export const FIVE_H_RESET = 1795985330_000;
