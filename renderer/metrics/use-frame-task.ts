import { useEffect } from 'react';
import { useServices } from '../services.js';
import type { FrameTask } from './frame-loop.js';

/** Registers a frame task for the component's lifetime (re-registered when `deps` change). */
export function useFrameTask(task: FrameTask['run'], deps: readonly unknown[]): void {
  const { frames } = useServices();
  useEffect(() => frames.add({ run: task }), [frames, ...deps]);
}
