import { realpathSync, statSync } from 'node:fs';
import { extname, join, sep } from 'node:path';

/** What the built renderer contains (vite output), with a charset for text so nothing is sniffed. */
export const MIME_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

export function mimeTypeOf(path: string): string {
  return MIME_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The file under `root` that a URL path names, or null when it names nothing there. Refuses, rather
 * than normalises, anything that could climb out: `..` segments (also percent-encoded), backslashes,
 * NUL, and symbolic links that resolve outside the root. `/` and folders serve their index.html.
 */
export function resolveStaticPath(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const segments = decoded.split('/').filter((segment) => segment.length > 0);
  if (segments.some((segment) => segment === '..' || segment === '.')) return null;
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return null;
  }
  let candidate = join(realRoot, ...segments);
  let stats = statSync(candidate, { throwIfNoEntry: false });
  if (stats?.isDirectory() === true) {
    candidate = join(candidate, 'index.html');
    stats = statSync(candidate, { throwIfNoEntry: false });
  }
  if (stats?.isFile() !== true) return null;
  const real = realpathSync(candidate);
  return real.startsWith(realRoot + sep) ? real : null;
}
