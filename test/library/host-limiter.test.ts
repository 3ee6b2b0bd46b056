// The limiter contract run against a limiter written as a host would write it
// (test/library/host-limiter.ts): the public contract asks nothing the port's doc
// comments do not state.
import { runLimiterContract } from '../../src/testing/limiter-contract.ts';
import { createHostLimiter } from './host-limiter.ts';

runLimiterContract('a host in-memory limiter', () => createHostLimiter());
