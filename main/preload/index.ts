import { contextBridge, ipcRenderer, webUtils } from 'electron';
import { createKvscopeBridge } from './create-bridge.js';
import { installDropHandler, type DropTargetLike } from './drop-folders.js';

// The preload of the workbench window: sandboxed (so bundled into one CommonJS file, see
// electron.vite.config.ts), context-isolated, and the page's only door to main. It exposes
// `window.kvscope` (app/protocol/kvscope-bridge.ts) and nothing else: never ipcRenderer.
const { bridge, dispatchCommand } = createKvscopeBridge({
  invoke: (channel, message) => ipcRenderer.invoke(channel, message),
  on: (channel, listener) => void ipcRenderer.on(channel, listener),
});

contextBridge.exposeInMainWorld('kvscope', bridge);

installDropHandler(
  (globalThis as unknown as { window: DropTargetLike }).window,
  (file) => webUtils.getPathForFile(file as Parameters<typeof webUtils.getPathForFile>[0]),
  dispatchCommand,
);
