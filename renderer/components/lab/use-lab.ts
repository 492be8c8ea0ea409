import { useMemo } from 'react';
import { useServices } from '../../services.js';
import { LabController } from './lab-controller.js';

const controllers = new WeakMap<object, LabController>();

/** The Lab's controller for this workbench (one per store), built on the workbench controller's API. */
export function useLabController(): LabController {
  const { controller, store } = useServices();
  return useMemo(() => {
    let lab = controllers.get(store);
    if (lab === undefined) {
      lab = new LabController(controller.api, store);
      controllers.set(store, lab);
    }
    return lab;
  }, [controller, store]);
}
