/**
 * The workbench page is served from a custom, privileged scheme rather than file:// (Electron
 * security checklist #18): file:// pages can read any local file, and every file:// page shares one
 * origin. Only this origin (and, in development, electron-vite's dev server) is trusted.
 */
export const APP_SCHEME = 'kvscope';
export const APP_HOST = 'app';
export const APP_ENTRY_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/**
 * Whether a page URL is the workbench's own. `devServerUrl` is electron-vite's renderer dev server
 * (ELECTRON_RENDERER_URL), trusted only in unpackaged development runs.
 */
export function isAppUrl(url: string, devServerUrl?: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  // WHATWG gives custom schemes an opaque origin ("null"), so scheme and host are compared instead.
  if (parsed.protocol === `${APP_SCHEME}:` && parsed.host === APP_HOST) return true;
  if (devServerUrl === undefined) return false;
  try {
    return parsed.origin === new URL(devServerUrl).origin;
  } catch {
    return false;
  }
}
