// The contract suites a host runs against its own ports (package.json
// exports["./testing"]), with the fake upstream and dialects the provider
// adapter table speaks through. Built on node:test and node:assert only, so the
// package keeps no runtime dependency. Each run*Contract registers node:test
// tests: call it at the top level of a test file.
export { runAuditSinkContract, type AuditSinkUnderTest } from './testing/audit-sink-contract.ts';
export { runAuthenticatorContract, type AuthenticatorUnderTest } from './testing/authenticator-contract.ts';
export { runKeyStoreContract, type KeyStoreContractOptions, type KeyStoreStorage } from './testing/key-store-contract.ts';
export { runLimiterContract, type MakeLimiter } from './testing/limiter-contract.ts';
export { REQUEST_RECORD_FIELDS, runLoggerContract, type LoggedRecord, type LoggerUnderTest } from './testing/logger-contract.ts';
export { runProviderAdapterContract, type ProviderContractSubject } from './testing/provider-adapter-contract.ts';
export { ANTHROPIC_DIALECT, OPENAI_DIALECT, type ScriptedAnswer, type UpstreamDialect } from './testing/provider-dialects.ts';
export { runProviderKeySourceContract, type ProviderKeySourceUnderTest } from './testing/provider-key-contract.ts';
export { runTraceExporterContract, type TraceExporterUnderTest } from './testing/trace-exporter-contract.ts';
export { runUsageStoreContract } from './testing/usage-store-contract.ts';
export {
  sendJson,
  startEventStream,
  startFakeUpstream,
  type FakeUpstream,
  type FakeUpstreamOptions,
  type ReceivedRequest,
  type UpstreamHandler,
} from './testing/fake-upstream.ts';
