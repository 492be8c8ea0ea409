import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Dialog } from 'electron';
import { nativeDialogs } from './native-dialogs.js';

vi.mock('electron', () => ({}));

const root = mkdtempSync(join(tmpdir(), 'kvscope-export-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function dialogChoosing(filePath: string): Pick<Dialog, 'showOpenDialog' | 'showSaveDialog'> {
  return {
    showOpenDialog: vi.fn(),
    showSaveDialog: vi.fn(async () => ({ canceled: false, filePath })),
  } as unknown as Pick<Dialog, 'showOpenDialog' | 'showSaveDialog'>;
}

const runExport = { fileName: 'kvscope-run-x.json', mimeType: 'application/json', content: '{"a": 1}\n', saved: null };

describe('exports through the save dialog (issue 9, what to build 5)', () => {
  it('writes the chosen file atomically', async () => {
    const target = join(root, 'run.json');
    expect(await nativeDialogs(dialogChoosing(target), () => null, root).saveExport!(runExport)).toBe(target);
    expect(readFileSync(target, 'utf8')).toBe(runExport.content);
  });

  it('says when the chosen path is a folder or its folder is gone, before writing', async () => {
    await expect(nativeDialogs(dialogChoosing(root), () => null, root).saveExport!(runExport)).rejects.toThrow(/^Export to .* is a folder; give a file name/);
    await expect(nativeDialogs(dialogChoosing(join(root, 'gone', 'run.json')), () => null, root).saveExport!(runExport)).rejects.toThrow(/the folder .*gone does not exist/);
  });
});
