// The public API of the portcullis package (package.json exports["."]): every
// export here is public, and nothing else is reachable through the package's
// exports. api/portcullis.api.md is the reviewed text of this surface.
export { checkConfig, GatewayConfigError } from './library/check-config.ts';
export type { CheckConfigOptions, ConfigIssue, ConfigIssueCode, GatewayConfigInput } from './api/config.ts';
