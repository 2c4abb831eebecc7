export * from './claude-binary.js';
export * from './claude-env.js';
export * from './fake-anthropic.js';
export * from './tmux.js';
export * from './wait.js';
