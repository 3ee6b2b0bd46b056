// Re-exported for the files that import the redis-server helpers from here;
// new code imports ../support/redis-server.ts.
export { startRedisServer, type RedisServerHandle, type RedisServerOptions, type RedisServerTls } from '../support/redis-server.ts';
