// The provider adapter contract run for a host's own type, written with the
// public types only (./providers-sample-adapter.ts).
import { runProviderAdapterContract } from '../../src/testing/provider-adapter-contract.ts';
import { PARROT_DIALECT, parrotAdapter } from './providers-sample-adapter.ts';

runProviderAdapterContract('parrot (a host type)', {
  adapter: parrotAdapter,
  dialect: PARROT_DIALECT,
  config: { region: 'eu', apiKeyHeader: 'x-parrot-key' },
});
