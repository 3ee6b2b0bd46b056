// The dashboard's files on the admin listener: index.html at / and the rest
// under /assets/, read once at start from the built dashboard (dist/dashboard),
// each answered with the dashboard's Content-Security-Policy. The listener
// wraps these routes in its host check (admin-server.ts).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../errors/api-error.ts';
import type { RouteHandler } from '../http/request-context.ts';

export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const MAX_ASSETS = 64;
const ASSET_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
};

interface Asset {
  type: string;
  body: Buffer;
}

export function defaultDashboardDir(): string {
  // dist/src/admin/dashboard-assets.js -> dist/dashboard
  return fileURLToPath(new URL('../../dashboard/', import.meta.url));
}

/** The built dashboard files, read once at start; an unbuilt dashboard is an empty map. */
function loadDashboard(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return assets;
  }
  for (const name of names.sort()) {
    if (assets.size >= MAX_ASSETS) break;
    const ext = path.extname(name);
    const type = name === 'index.html' ? 'text/html; charset=utf-8' : ASSET_TYPES[ext];
    if (type === undefined || !/^[A-Za-z0-9._-]+$/.test(name)) continue;
    try {
      assets.set(name, { type, body: readFileSync(path.join(dir, name)) });
    } catch {
      // a directory or an unreadable file: not an asset
    }
  }
  return assets;
}

/** GET / (the page) and GET /assets/:name, served from what `dir` held at start. */
export function dashboardRoutes(dir: string): Array<[method: string, path: string, handler: RouteHandler]> {
  const assets = loadDashboard(dir);
  const page: RouteHandler = async (ctx) => {
    const index = assets.get('index.html');
    if (index === undefined) throw new ApiError('dashboard_not_built');
    ctx.res.writeHead(200, { 'content-type': index.type, 'content-length': index.body.length, 'content-security-policy': DASHBOARD_CSP });
    ctx.res.end(ctx.req.method === 'HEAD' ? undefined : index.body);
  };
  const asset: RouteHandler = async (ctx) => {
    const name = ctx.path.slice('/assets/'.length);
    const found = name === 'index.html' ? undefined : assets.get(name);
    if (found === undefined) throw new ApiError('unknown_url', `No dashboard asset ${name}.`, { type: 'not_found_error' });
    ctx.res.writeHead(200, { 'content-type': found.type, 'content-length': found.body.length, 'content-security-policy': DASHBOARD_CSP });
    ctx.res.end(ctx.req.method === 'HEAD' ? undefined : found.body);
  };
  return [
    ['GET', '/', page],
    ['GET', '/assets/:name', asset],
  ];
}
