// The contract suites a host runs against its own ports (package.json
// exports["./testing"]), with the config check they set up with. Built on
// node:test and node:assert only, so the package keeps no runtime dependency.
export { checkConfig, GatewayConfigError } from './library/check-config.ts';
export type { ConfigIssue } from './api/config.ts';
