// The little of oidc-provider's API the SSO tests use (the package ships no types).
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface GrantInstance {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  export interface ProviderContext {
    oidc: {
      client: { clientId: string };
      session: { accountId: string | undefined; grantIdFor(clientId: string): string | undefined };
      result?: { consent?: { grantId?: string } };
      provider: Provider;
    };
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    readonly issuer: string;
    Grant: {
      new (properties: { clientId: string; accountId: string | undefined }): GrantInstance;
      find(id: string): Promise<GrantInstance | undefined>;
    };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
}
