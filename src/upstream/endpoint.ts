// Where a TCP connection to a URL goes, as node:net wants it: the host (an
// IPv6 literal without its URL brackets) and the port, or the given default.
export function endpointOf(url: URL, defaultPort: number): { host: string; port: number } {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { host, port: url.port === '' ? defaultPort : Number(url.port) };
}
