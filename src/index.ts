// The public API of the portcullis package (package.json exports["."]): every
// export here is public, and nothing else is reachable through the package's
// exports. api/portcullis.api.md is the reviewed text of this surface.
export { createGateway } from './library/create-gateway.ts';
export { checkConfig, GatewayConfigError } from './library/check-config.ts';
export type { CheckConfigOptions, ConfigIssue, ConfigIssueCode, GatewayConfigInput } from './api/config.ts';
export type {
  DrainReport,
  Gateway,
  GatewayOptions,
  GatewayStatus,
  ListenFailure,
  ListeningAddress,
  ListenOptions,
  ReloadOptions,
  ReloadResult,
  RequestHandler,
} from './api/gateway.ts';
export type { ApiDoor, AuthenticationRequest, Authenticator, BudgetPeriod, GuardAction, IssuedKey, KeyGuard, KeyLimits, KeyPatch, KeyPolicy, KeyRecord, KeySettingsInput, KeyStore, ListedKey, WriteAhead } from './api/keys.ts';
export type { AdmitDecision, BudgetRefusal, Charge, KeyUsage, Limiter, LimitWindowState, PendingUsage, Permit, RateLimitSnapshot, UsageBucket, UsageGranularity, UsageSeries, UsageStore } from './api/limits.ts';
export type { AuditRecord, AuditSink, AuditValue, LogFields, Logger, ProviderKeySource, RequestLogFields, SpanAttributes, SpanData, TraceExporter } from './api/ports.ts';
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatContentPart,
  ChatFinishReason,
  ChatImagePart,
  ChatJsonSchemaFormat,
  ChatMessage,
  ChatPrediction,
  ChatRequest,
  ChatResponseFormat,
  ChatRole,
  ChatTextPart,
  ChatToolCall,
  ChatToolCallDelta,
  ChatToolDefinition,
  ChatUsage,
  ParamRefusal,
  ProviderAdapter,
  ProviderAdapterContext,
  ProviderCodec,
  ProviderSettingsReport,
  ServerSentEvent,
  StreamDecoder,
} from './api/providers.ts';
