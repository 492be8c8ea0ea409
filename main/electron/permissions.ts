import type { Session } from 'electron';

/** The one permission the workbench page uses: writing to the clipboard (copy buttons). */
const ALLOWED: ReadonlySet<string> = new Set(['clipboard-sanitized-write']);

export function isPermissionAllowed(permission: string): boolean {
  return ALLOWED.has(permission);
}

/**
 * Denies by default, on both paths Electron asks (security checklist #5): requests (a page asking
 * for the camera, notifications, …) and checks (a page or Chromium querying whether it may, which
 * Electron otherwise answers "granted"), plus device access (HID, serial, USB), whatever the origin.
 */
export function denyPermissionsByDefault(session: Pick<Session, 'setPermissionRequestHandler' | 'setPermissionCheckHandler' | 'setDevicePermissionHandler'>): void {
  session.setPermissionRequestHandler((_contents, permission, callback) => callback(isPermissionAllowed(permission)));
  session.setPermissionCheckHandler((_contents, permission) => isPermissionAllowed(permission));
  session.setDevicePermissionHandler(() => false);
}
