import type { ChartTheme } from '../charts/chart-theme.js';
import { withPngText } from './png-text.js';

/** What an exported chart says about itself: in its header and in its PNG text chunks. */
export interface ChartIdentity {
  /** the run's id (a live run's, or the saved record's) */
  readonly runId: string;
  /** the model's name and graph file */
  readonly model: string;
  /** the run's settings in one line (describeSettings) */
  readonly settings: string;
}

const PIXEL_RATIO = 2;

/**
 * A chart's PNG with a header above it: the chart's title, the run id, the model and the settings,
 * drawn in the current scheme's colours, and the same in iTXt chunks (Title, Description, Source,
 * Software), so a figure pasted into a paper or a chat still says what it is.
 */
export async function chartPng(chartUrl: string, title: string, identity: ChartIdentity, theme: ChartTheme, software: string): Promise<Uint8Array> {
  const image = await loadImage(chartUrl);
  const lines = [`run ${identity.runId} · ${identity.model}`, identity.settings];
  const pad = 12 * PIXEL_RATIO;
  const titleSize = 14 * PIXEL_RATIO;
  const lineSize = 11 * PIXEL_RATIO;
  const header = pad + titleSize + lines.length * (lineSize + 4 * PIXEL_RATIO) + pad / 2;
  const canvas = document.createElement('canvas');
  canvas.width = image.width;
  canvas.height = header + image.height;
  const context = canvas.getContext('2d');
  if (context === null) throw new Error('this browser cannot draw on a canvas, so the chart cannot be exported as PNG');
  context.fillStyle = theme.background;
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.textBaseline = 'top';
  context.fillStyle = theme.text;
  context.font = `600 ${titleSize}px ${theme.fontFamily}`;
  context.fillText(title, pad, pad, canvas.width - 2 * pad);
  context.fillStyle = theme.muted;
  context.font = `${lineSize}px ${theme.fontFamily}`;
  lines.forEach((text, i) => context.fillText(text, pad, pad + titleSize + 6 * PIXEL_RATIO + i * (lineSize + 4 * PIXEL_RATIO), canvas.width - 2 * pad));
  context.drawImage(image, 0, header);
  const bytes = dataUrlBytes(canvas.toDataURL('image/png'));
  return withPngText(bytes, {
    Title: `${title} — run ${identity.runId}`,
    Description: `${identity.model} · ${identity.settings}`,
    Source: `kvscope run ${identity.runId}`,
    Software: software,
  });
}

function loadImage(url: string): Promise<HTMLImageElement> {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => resolve(image);
    image.onerror = () => reject(new Error('the chart\'s image could not be read back for the export'));
    image.src = url;
  });
}

function dataUrlBytes(url: string): Uint8Array {
  const base64 = url.slice(url.indexOf(',') + 1);
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}
