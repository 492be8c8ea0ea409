/**
 * The renderer's Content-Security-Policy (Electron security checklist #7), the same in both hosts:
 * scripts only from the app itself (no inline script, no eval), nothing framed or framing, no forms,
 * no plugins. Styles allow 'unsafe-inline' because React and ECharts set inline style attributes
 * and ECharts' tooltip writes `style="…"` into its markup; a style cannot run code.
 * `connect` lists where the page may open connections besides itself (serve mode: its WebSocket).
 */
export function contentSecurityPolicy(connect: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src ${["'self'", ...connect].join(' ')}`,
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}
