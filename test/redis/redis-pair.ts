// One real redis-server for a test file and two clients on it, as two gateway
// instances would use it: started before the file's tests, closed and stopped
// after them.
import { after, before } from 'node:test';
import { createRedisClient, type RedisClient } from '../../src/redis/client.ts';
import { startRedisServer, type RedisServerHandle } from './redis-server.ts';

export interface RedisPair {
  server: RedisServerHandle;
  clientA: RedisClient;
  clientB: RedisClient;
}

/** Registers the file's before() and after() hooks; `ready` is given the pair once the server answers. */
export function useRedisPair(ready: (pair: RedisPair) => void): void {
  let pair: RedisPair | undefined;
  before(async () => {
    const server = await startRedisServer();
    const connect = (): RedisClient => createRedisClient({ host: '127.0.0.1', port: server.port });
    pair = { server, clientA: connect(), clientB: connect() };
    ready(pair);
  });
  after(async () => {
    if (pair === undefined) return;
    await pair.clientA.close();
    await pair.clientB.close();
    await pair.server.stop();
  });
}
