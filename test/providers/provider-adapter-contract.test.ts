// The provider adapter contract (src/testing/provider-adapter-contract.ts) for
// the built-in HTTP types; a host type's run is test/library/providers-contract.test.ts.
import { runProviderAdapterContract } from '../../src/testing/provider-adapter-contract.ts';

runProviderAdapterContract('openai', { type: 'openai' });
runProviderAdapterContract('anthropic', { type: 'anthropic' });
